// `vmm-run record`, `import-trace`, `compare-traces` and `reduce` of an imported fault, through the
// binary. A program that never initialises CUDA records nothing, so the recorder is not needed
// here (a stand-in file takes its place); what the recorder writes on a GPU is in the committed
// traces (tests/fixtures/traces/, read by runner/trace's tests) and tools/h200_record.sh.
#include <string>

#include "tests/e2e_process_test.h"

namespace vmm {
namespace {

class E2ERecord : public E2EProcessTest {
 protected:
  E2ERecord() : E2EProcessTest("vmm_e2e_record") {}
};

// A program that unmaps memory under a kernel still reading it, then sees the fault, as the
// recorder writes it (tools/recorded/torch_unmap_before_sync.py on the H200, shortened).
constexpr const char* kFaultTrace =
    "# vmm-trace 1\n"
    "# recorded by vmm-run record: python3 unmap_before_sync.py\n"
    "1 cuMemAddressReserve result=0 t_ns=1 pid=5 tid=5 ptr=0x7f0000000000 size=4194304 "
    "alignment=0 addr=0x0\n"
    "2 cuMemCreate result=0 t_ns=2 pid=5 tid=5 handle=0x55 size=4194304 location=1 device=0 "
    "handle_types=0\n"
    "3 cuMemMap result=0 t_ns=3 pid=5 tid=5 ptr=0x7f0000000000 size=4194304 offset=0 "
    "handle=0x55\n"
    "4 cuMemSetAccess result=0 t_ns=4 pid=5 tid=5 ptr=0x7f0000000000 size=4194304 access=0:3\n"
    "5 cuLaunchKernel result=0 t_ns=5 pid=5 tid=5 kernel=fill stream=0x0 ptrs=0x7f0000000000\n"
    "6 cuStreamSynchronize result=0 t_ns=6 pid=5 tid=5 stream=0x0\n"
    "7 cuLaunchKernel result=0 t_ns=7 pid=5 tid=5 kernel=mul stream=0x0 ptrs=0x7f0000000000\n"
    "8 cuMemUnmap result=0 t_ns=8 pid=5 tid=5 ptr=0x7f0000000000 size=4194304\n"
    "9 cuMemRelease result=0 t_ns=9 pid=5 tid=5 handle=0x55\n"
    "10 cuStreamSynchronize result=700 t_ns=10 pid=5 tid=5 stream=0x0\n";

TEST_F(E2ERecord, RecordRunsTheProgramAndExitsWithItsCode) {
  const std::string fake = Write("recorder.so", "");
  Finished r = Run("record -o " + Path("t.trace") + " --recorder " + fake + " -- sh -c 'exit 3'");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("recorded 0 calls (0 VMM, 0 queries, 0 graph, 0 synchronisation, 0 "
                       "launches given reserved memory) from 0 processes to " +
                       Path("t.trace") + "; the program exited with 3"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(Text("t.trace"), "# vmm-trace 1\n# recorded by vmm-run record: sh -c 'exit 3'\n");

  // An argument outside printable ASCII is written '?' in the trace's header (a trace is ASCII).
  r = Run("record -o " + Path("v.trace") + " --recorder " + fake + " -- sh -c true caf\xc3\xa9");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Text("v.trace"),
            "# vmm-trace 1\n# recorded by vmm-run record: sh -c true 'caf?"
            "?'\n");

  r = Run("record -o " + Path("u.trace") + " --recorder " + fake + " -- /no/such/program");
  EXPECT_EQ(r.exit_code, 127) << r.out;
  EXPECT_NE(r.out.find("error: cannot run '/no/such/program': No such file or directory"),
            std::string::npos)
      << r.out;

  r = Run("record --recorder " + Path("none.so") + " -- true");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("error: no recorder library: looked for '" + Path("none.so") + "'"),
            std::string::npos)
      << r.out;
}

TEST_F(E2ERecord, AnImportedFaultRunsAsAnIsolateBlockAndReducesKeepingTheRace) {
  const std::string trace = Write("fault.trace", kFaultTrace);
  Finished r = Run("import-trace " + trace + " -o " + Path("fault.yaml"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("wrote " + Path("fault.yaml") + " (1 steps)"), std::string::npos) << r.out;
  r = Run(Path("fault.yaml") + " --backend host -q --report " + Path("fault.json"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const report::Report report = Read("fault.json");
  ASSERT_EQ(report.steps.size(), 1u);
  ASSERT_TRUE(report.steps[0].child);
  EXPECT_EQ(report.steps[0].child->error, "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_EQ(report.steps[0].child->failed_step, "the fault surfaces");

  r = Run("reduce " + Path("fault.yaml") + " --backend host --keep unmap --keep set_access -o " +
          Path("small.yaml"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("outcome kept: exit 0; isolate 'the program's run up to its fault': "
                       "CUDA_ERROR_ILLEGAL_ADDRESS at the fault surfaces (host)"),
            std::string::npos)
      << r.out;
  const std::string small = Text("small.yaml");
  for (const char* op : {"op: unmap", "op: set_access", "op: busy", "the fault surfaces"})
    EXPECT_NE(small.find(op), std::string::npos) << op << " in\n" << small;
  EXPECT_EQ(small.find("op: check_value"), std::string::npos) << small;

  r = Run("reduce " + Path("fault.yaml") + " --backend host --keep unmapp");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("error: --keep unmapp: not an op"), std::string::npos) << r.out;
}

TEST_F(E2ERecord, CompareTracesPassesOnTheSameCallsAndListsTheDifference) {
  const std::string a = Write("a.trace", kFaultTrace);
  Finished r = Run("compare-traces " + a + " " + a);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("matched in order: 6 (100.00% of A, 100.00% of B)"), std::string::npos)
      << r.out;
  std::string shorter = kFaultTrace;
  shorter.erase(shorter.find("4 cuMemSetAccess"),
                shorter.find("5 cuLaunch") - shorter.find("4 cu"));
  const std::string b = Write("b.trace", shorter);
  r = Run("compare-traces " + a + " " + b);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("only in A (1):\n  line 6: set_access R0+0 size=4194304 access=0:3;\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(Run("compare-traces " + a + " " + b + " --min-match 80").exit_code, 0);

  const std::string bad = Write("bad.trace", "# vmm-trace 1\n1 cuMemMap result=0\n");
  r = Run("import-trace " + bad);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("error: " + bad + ":2: cuMemMap: key 't_ns' missing"), std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace vmm
