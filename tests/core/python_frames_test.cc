// A trace's Python stacks as findings show them: which frames are the program's own.
#include "core/trace/python_frames.h"

#include <gtest/gtest.h>

namespace graphcheck::trace {
namespace {

TEST(PythonFramesTest, TellsTheUsersPythonFilesFromLibraries) {
  EXPECT_TRUE(IsUserPythonFile("train.py"));
  EXPECT_TRUE(IsUserPythonFile("/home/me/project/models/net.py"));
  EXPECT_TRUE(IsUserPythonFile("<stdin>"));
  EXPECT_FALSE(IsUserPythonFile("/usr/local/lib/python3.12/site-packages/torch/nn/modules/module.py"));
  EXPECT_FALSE(IsUserPythonFile("/usr/lib/python3/dist-packages/numpy/core/fromnumeric.py"));
  EXPECT_FALSE(IsUserPythonFile("/opt/pytorch/torch/cuda/graphs.py"));
  EXPECT_FALSE(IsUserPythonFile("/usr/lib/python3.11/contextlib.py"));
  EXPECT_FALSE(IsUserPythonFile("/root/.pyenv/versions/3.13.1/lib/python3.13/threading.py"));
  EXPECT_FALSE(IsUserPythonFile("<frozen runpy>"));
  EXPECT_FALSE(IsUserPythonFile("/tmp/gc/graphcheck_probe/sitecustomize.py"));
  EXPECT_FALSE(IsUserPythonFile(""));
}

TEST(PythonFramesTest, MarksEachFrameOfAStack) {
  Trace trace;
  const StringId user = 1, library = 2, function = 3;
  trace.strings = {"", "/home/me/train.py", "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", "step"};
  trace.python_stacks.push_back({{{library, 1780, function}, {user, 42, function}}});
  const std::vector<SourceFrame> frames = PythonFrames(trace, 1);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_FALSE(frames[0].user);
  EXPECT_EQ(frames[1], (SourceFrame{"/home/me/train.py", 42, "step", true}));
  EXPECT_TRUE(PythonFrames(trace, 0).empty());
  EXPECT_TRUE(PythonFrames(trace, 2).empty());
}

}  // namespace
}  // namespace graphcheck::trace
