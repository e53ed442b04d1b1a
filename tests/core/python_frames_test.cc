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

// The probe's hooks call the recorder from inside the program's calls: their frames are never shown.
TEST(PythonFramesTest, LeavesOutTheProbesOwnFrames) {
  Trace trace;
  trace.python_stacks.push_back(
      {{{trace.Intern("/opt/gc/probe/graphcheck_probe/bridge.py"), 122, trace.Intern("Recorder.emit")},
        {trace.Intern("/opt/gc/probe/graphcheck_probe/watches.py"), 313, trace.Intern("replay_and_look")},
        {trace.Intern("/opt/gc/probe/graphcheck_probe.py"), 96, trace.Intern("_Recorder.emit")},
        {trace.Intern("/home/me/train.py"), 44, trace.Intern("manual")}}});
  const std::vector<SourceFrame> frames = PythonFrames(trace, 1);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0], (SourceFrame{"/home/me/train.py", 44, "manual", true}));
  EXPECT_TRUE(IsProbeFile("/opt/gc/probe/graphcheck_probe/shadow.py"));
  EXPECT_FALSE(IsProbeFile("/home/me/graphcheck_probes.py"));
}

}  // namespace
}  // namespace graphcheck::trace
