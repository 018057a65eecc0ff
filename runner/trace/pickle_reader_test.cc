// The plain-data pickle reader: PyTorch's snapshot as the H200 wrote it (torch 2.11), each opcode
// it reads built by hand, and the inputs it must refuse with the byte and the reason: objects,
// truncation, a bad memo reference, integers past 64 bits, bytes after STOP, too many values.
#include "runner/trace/pickle_reader.h"

#include <gtest/gtest.h>

#include <string>

#include "runner/base/input_file.h"
#include "runner/base/limits.h"

namespace vmm::trace {
namespace {

using Kind = PickleValue::Kind;

std::string Fixture(const std::string& name) {
  StatusOr<std::string> bytes = ReadInputFile(
      std::string(VMMRUN_SOURCE_DIR) + "/tests/fixtures/torch_snapshots/" + name, 1 << 20);
  EXPECT_TRUE(bytes.ok()) << bytes.status().message();
  return bytes.ok() ? *bytes : "";
}

// Protocol 2 framing around `body` (opcodes), ending in STOP.
std::string Pickle(const std::string& body) { return std::string("\x80\x02", 2) + body + "."; }

std::string Message(std::string_view bytes) {
  StatusOr<PickleDocument> v = ReadPickle(bytes);
  return v.ok() ? "ok" : v.status().message();
}

TEST(PickleReader, ReadsTheSnapshotTorchWrote) {
  const std::string bytes = Fixture("expandable.pickle");
  StatusOr<PickleDocument> root = ReadPickle(bytes);
  ASSERT_TRUE(root.ok()) << root.status().message();
  const PickleValue& v = root->root();
  ASSERT_EQ(v.kind, Kind::kDict);
  const PickleValue* traces = v.Find("device_traces");
  ASSERT_NE(traces, nullptr);
  ASSERT_EQ(traces->items.size(), 1u);
  const PickleValue& trace = *traces->items[0];
  ASSERT_EQ(trace.items.size(), 30u);
  const PickleValue& first = *trace.items[0];
  EXPECT_EQ(first.Find("action")->text, "segment_map");
  EXPECT_EQ(first.Find("addr")->integer, 12918456320);  // LONG1: past 32 bits
  EXPECT_EQ(first.Find("size")->integer, 20971520);
  EXPECT_EQ(v.Find("allocator_settings")->Find("expandable_segments")->kind, Kind::kBool);
  EXPECT_TRUE(v.Find("allocator_settings")->Find("expandable_segments")->boolean);
}

TEST(PickleReader, BuildsEachPlainValue) {
  // {"a": [1, 300, -2, 70000, None, True, False, 1.5, b"xy", ("t",)], "b": <memo of "a"'s list>}
  std::string body("}q\x00(", 4);                               // EMPTY_DICT, BINPUT 0, MARK
  body += std::string("X\x01\x00\x00\x00", 5) + "a";            // BINUNICODE "a"
  body += "]q\x01(";                                            // EMPTY_LIST, BINPUT 1, MARK
  body += "K\x01";                                              // BININT1 1
  body += std::string("M\x2c\x01", 3);                          // BININT2 300
  body += std::string("J\xfe\xff\xff\xff", 5);                  // BININT -2
  body += std::string("\x8a\x03\x70\x11\x01", 5);               // LONG1 70000
  body += "N\x88\x89";                                          // NONE, NEWTRUE, NEWFALSE
  body += std::string("G\x3f\xf8\x00\x00\x00\x00\x00\x00", 9);  // BINFLOAT 1.5
  body += std::string("C\x02xy", 4);                            // SHORT_BINBYTES
  body += std::string("\x8c\x01t\x85", 4);                      // SHORT_BINUNICODE "t", TUPLE1
  body += "e";                                                  // APPENDS
  body += std::string(
              "\x8c\x01"
              "b",
              3) +
          "h\x01";  // "b", BINGET 1
  body += "u";      // SETITEMS
  StatusOr<PickleDocument> root = ReadPickle(Pickle(body));
  ASSERT_TRUE(root.ok()) << root.status().message();
  const PickleValue& list = *root->root().Find("a");
  ASSERT_EQ(list.items.size(), 10u);
  EXPECT_EQ(list.items[0]->integer, 1);
  EXPECT_EQ(list.items[1]->integer, 300);
  EXPECT_EQ(list.items[2]->integer, -2);
  EXPECT_EQ(list.items[3]->integer, 70000);
  EXPECT_EQ(list.items[4]->kind, Kind::kNone);
  EXPECT_TRUE(list.items[5]->boolean);
  EXPECT_FALSE(list.items[6]->boolean);
  EXPECT_EQ(list.items[7]->real, 1.5);
  EXPECT_EQ(list.items[8]->text, "xy");
  EXPECT_EQ(list.items[9]->kind, Kind::kTuple);
  EXPECT_EQ(list.items[9]->items[0]->text, "t");
  EXPECT_EQ(root->root().Find("b"), &list);  // the memo shares the node: the same list
  // A negative LONG1 of 8 bytes, and the smallest 64-bit integer.
  root = ReadPickle(Pickle(std::string("\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80", 10)));
  ASSERT_TRUE(root.ok()) << root.status().message();
  EXPECT_EQ(root->root().integer, INT64_MIN);
}

TEST(PickleReader, RefusesWhatIsNotPlainDataWithTheByteAndTheReason) {
  EXPECT_EQ(Message(Pickle("cos\nsystem\n")),
            "pickle byte 2: opcode 0x63: it would build a Python object; vmm-run reads plain "
            "data only (dicts, lists, numbers, text), as an allocator snapshot holds");
  EXPECT_EQ(Message(std::string("\x80\x02}", 3)),
            "pickle byte 3: the pickle ends before its STOP opcode");
  EXPECT_EQ(Message(Pickle(std::string("X\xff\x00\x00\x00"
                                       "ab",
                                       7))),
            "pickle byte 2: opcode 0x58: its argument runs past the end of the pickle");
  EXPECT_EQ(Message(Pickle("h\x07")), "pickle byte 2: opcode 0x68: memo entry 7 is not set");
  EXPECT_EQ(Message(Pickle(std::string("\x8a\x09", 2) + std::string(9, '\x01'))),
            "pickle byte 2: opcode 0x8a: an integer of 9 bytes (at most 8 are read)");
  EXPECT_EQ(Message(Pickle("N") + "N"), "pickle byte 4: 1 bytes after STOP");
  EXPECT_EQ(Message(Pickle("NN")), "pickle byte 4: STOP leaves 2 values on the stack");
  EXPECT_EQ(Message(Pickle("a")),
            "pickle byte 2: opcode 0x61: the stack (above the last mark) is empty");
  EXPECT_EQ(Message(Pickle("Na")), "pickle byte 3: opcode 0x61: the stack is empty");
  EXPECT_EQ(Message(Pickle("}(Nu")),
            "pickle byte 5: opcode 0x75: an odd number of values for dict items");
  EXPECT_EQ(Message(Pickle("NNa")),
            "pickle byte 4: opcode 0x61: expects a list on the stack, got None");
  EXPECT_EQ(Message(std::string("\x80\x07N.", 4)),
            "pickle byte 0: opcode 0x80: protocol 7 (2 to 5 are read)");
  EXPECT_EQ(Message(Pickle("I1\n")),
            "pickle byte 2: opcode 0x49: not read by vmm-run (protocol 0/1 text opcodes, "
            "extensions and persistent ids are not part of an allocator snapshot)");
}

// A list appended to itself (the memo makes it possible): read, and freed with its document (the
// fuzzer found the leak that shared ownership had here).
TEST(PickleReader, AContainerInsideItselfIsReadAndFreed) {
  StatusOr<PickleDocument> root =
      ReadPickle(Pickle(std::string("]q\x00h\x00"
                                    "a",
                                    6)));
  ASSERT_TRUE(root.ok()) << root.status().message();
  ASSERT_EQ(root->root().items.size(), 1u);
  EXPECT_EQ(root->root().items[0], &root->root());
}

TEST(PickleReader, StopsAtTheValuesLimit) {
  ASSERT_TRUE(SetLimit("snapshot_values=100").ok());
  const std::string marks = Message(Pickle(std::string(1000, '(')));
  const std::string nones = Message(Pickle("]" + std::string(1000, 'N')));
  ResetLimits();
  EXPECT_NE(marks.find("builds more than 100 values"), std::string::npos) << marks;
  EXPECT_NE(nones.find("builds more than 100 values"), std::string::npos) << nones;
  EXPECT_NE(nones.find("--limit snapshot_values="), std::string::npos) << nones;
}

}  // namespace
}  // namespace vmm::trace
