// A trace's Python stacks as findings show them: which frames are the program's own.
#include "trace/python_frames.h"

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

// A failure six frames deep in transformers, under PyTorch's frames: the library's line, then the program's.
TEST(PythonFramesTest, NamesTheLibraryAndTheProgramsLineThatCalledIt) {
  const std::vector<SourceFrame> frames = {
      {"/opt/venv/lib/python3.12/site-packages/torch/_tensor.py", 51, "cuda", false},
      {"/opt/venv/lib/python3.12/site-packages/transformers/masking_utils.py", 604, "sdpa_mask", false},
      {"/opt/venv/lib/python3.12/site-packages/transformers/models/bert/modeling_bert.py", 704, "forward", false},
      {"/home/me/train.py", 14, "forward", true},
      {"/home/me/train.py", 90, "<module>", true}};
  EXPECT_EQ(PackageOf(frames[1].file), "transformers");
  EXPECT_EQ(PackageOf(frames[0].file), "torch");
  EXPECT_EQ(PackageOf("/home/me/train.py"), "");
  const LibrarySite site = ThirdPartySite(frames);
  EXPECT_EQ(site.package, "transformers");
  EXPECT_EQ(site.where, "transformers (masking_utils.py:604)");
  EXPECT_EQ(RaisedAt(frames), "in transformers (masking_utils.py:604), called from /home/me/train.py:14 in forward");
  EXPECT_EQ(RaisedAt({frames[0], frames[3]}), "at /home/me/train.py:14 in forward");  // torch's frames aside
  EXPECT_EQ(ProgramSite(frames), "/home/me/train.py:14 in forward");
}

// A stack deeper than the bound keeps its innermost frames and the program's outermost ones.
TEST(PythonFramesTest, ABoundKeepsTheInnermostAndTheProgramsOutermostFrames) {
  std::vector<absl::string_view> files(100, "/opt/venv/lib/python3.12/site-packages/transformers/x.py");
  files[90] = "/home/me/train.py";
  files[99] = "/home/me/train.py";
  const std::vector<size_t> keep = FramesToKeep(files, 64);
  ASSERT_EQ(keep.size(), kInnermostFramesKept + 2);
  EXPECT_EQ(keep[kInnermostFramesKept], 90u);
  EXPECT_EQ(keep.back(), 99u);
  EXPECT_EQ(FramesToKeep({files.begin(), files.begin() + 10}, 64).size(), 10u);
}

}  // namespace
}  // namespace graphcheck::trace
