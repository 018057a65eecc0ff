// The embedded scenario schema against the code: the op table (runner/vocab/ops.def) and the
// schema must say the same thing about every op, field descriptions exist, defaults agree.
#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "runner/scenario/parse.h"
#include "runner/scenario/size.h"
#include "runner/vocab/fault_kinds.h"
#include "runner/vocab/isolate.h"
#include "runner/yaml/json_schema.h"

namespace vmm {
namespace {

class ScenarioSchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StatusOr<JsonSchema> s = JsonSchema::Compile(ScenarioSchemaText());
    ASSERT_TRUE(s.ok()) << s.status().message();
    schema_ = std::make_unique<JsonSchema>(std::move(s).value());
  }
  const SchemaNode* Steps() const { return schema_->Find("#/definitions/step")->Resolved(); }
  // The op table's rows that are written with `op:` (kBlock rows are written as blocks).
  static std::vector<const OpInfo*> OpRows() {
    std::vector<const OpInfo*> rows;
    for (const OpInfo& info : AllOps())
      if (info.family != OpFamily::kBlock) rows.push_back(&info);
    return rows;
  }
  std::unique_ptr<JsonSchema> schema_;
};

TEST_F(ScenarioSchemaTest, OpsMatchTheOpTableInOrder) {
  const SchemaNode* steps = Steps();
  EXPECT_EQ(steps->discriminator, "op");
  const std::vector<const OpInfo*> rows = OpRows();
  ASSERT_EQ(steps->cases.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i)
    EXPECT_EQ(steps->cases[i].first, rows[i]->name) << "row " << i;
  EXPECT_EQ(steps->Property("op")->Resolved()->enum_values.size(), rows.size());
  // Block rows come after every op row (ops.def says so).
  for (size_t i = 0; i < AllOps().size(); ++i)
    EXPECT_EQ(AllOps()[i].family == OpFamily::kBlock, i >= rows.size()) << AllOps()[i].name;
}

// Top-level steps and a block's steps are ops, isolate blocks, together groups or threads groups;
// the block and the groups have their keys (a together group's items are checked by the
// validator: isolate blocks only; a threads group's are threads).
TEST_F(ScenarioSchemaTest, IsolateBlocksAreStepsOfTheirOwnForm) {
  const SchemaNode* items = schema_->root().Property("steps")->Resolved()->items->Resolved();
  ASSERT_NE(items->if_schema, nullptr);
  EXPECT_EQ(items->if_schema->Resolved()->required, std::vector<std::string>{"isolate"});
  EXPECT_EQ(items->then_schema->Resolved(), schema_->Find("#/definitions/isolate_block"));
  const SchemaNode* other = items->else_schema->Resolved();
  ASSERT_NE(other->if_schema, nullptr);
  EXPECT_EQ(other->if_schema->Resolved()->required, std::vector<std::string>{"together"});
  const SchemaNode* group = schema_->Find("#/definitions/together_group")->Resolved();
  EXPECT_EQ(other->then_schema->Resolved(), group);
  const SchemaNode* rest = other->else_schema->Resolved();
  ASSERT_NE(rest->if_schema, nullptr);
  EXPECT_EQ(rest->if_schema->Resolved()->required, std::vector<std::string>{"threads"});
  const SchemaNode* threads = schema_->Find("#/definitions/threads_group")->Resolved();
  EXPECT_EQ(rest->then_schema->Resolved(), threads);
  EXPECT_EQ(rest->else_schema->Resolved(), Steps());
  const SchemaNode* thread = schema_->Find("#/definitions/thread")->Resolved();
  EXPECT_EQ(threads->Property("threads")->Resolved()->items->Resolved(), thread);
  EXPECT_EQ(thread->Property("steps")->Resolved()->items->Resolved(), items);
  EXPECT_FALSE(threads->additional_allowed);
  EXPECT_FALSE(thread->additional_allowed);
  EXPECT_EQ(group->Property("together")->Resolved()->items->Resolved(), items);
  EXPECT_FALSE(group->additional_allowed);
  const SchemaNode* block = schema_->Find("#/definitions/isolate_block")->Resolved();
  EXPECT_EQ(block->Property("steps")->Resolved()->items->Resolved(), items);
  EXPECT_FALSE(block->additional_allowed);
  const SchemaNode* spec = schema_->Find("#/definitions/isolate")->Resolved();
  const SchemaNode* expect = spec->Property("expect")->Resolved();
  ASSERT_EQ(expect->any_of.size(), 2u);  // {signal: ...} or {timeout: ...}; "ok" or an error name
  // The signal names are vocab's.
  const SchemaNode* signal = expect->any_of[0]->Resolved()->Property("signal")->Resolved();
  std::string names;
  for (const std::string& s : signal->enum_values) names += (names.empty() ? "" : ", ") + s;
  EXPECT_EQ(names, SignalNames());
}

// inject_error's `call` names exactly the fault kinds of runner/vocab/fault_kinds.h, in order.
TEST_F(ScenarioSchemaTest, InjectErrorCallsAreTheFaultKinds) {
  const SchemaNode* op = schema_->Find("#/definitions/op_inject_error")->Resolved();
  const SchemaNode* call = op->Property("call")->Resolved();
  std::vector<std::string> kinds;
  for (size_t i = 0; i < kFaultKindCount; ++i)
    kinds.emplace_back(Describe(static_cast<FaultKind>(i)).name);
  EXPECT_EQ(call->enum_values, kinds);
}

// Each common key is in an op's schema exactly when the op table gives the op its flag.
TEST_F(ScenarioSchemaTest, CommonKeysMatchTheOpTableFlags) {
  const std::pair<const char*, OpFlag> keys[] = {{"repeat", kRepeat},
                                                 {"fatal", kFatal},
                                                 {"expect", kExpect},
                                                 {"async", kAsync},
                                                 {"expect_error", kDriver}};
  for (const auto& [op, fields] : Steps()->cases) {
    const OpInfo* info = FindOp(op);
    ASSERT_NE(info, nullptr) << op;
    for (const auto& [key, flag] : keys) {
      EXPECT_EQ(fields->Resolved()->Property(key) != nullptr, info->has(flag))
          << "op '" << op << "', key '" << key << "': schema and ops.def disagree";
    }
    EXPECT_FALSE(fields->Resolved()->additional_allowed) << op;
  }
}

TEST_F(ScenarioSchemaTest, CapturableOpsAreTheCaptureBodyOps) {
  const SchemaNode* capture = nullptr;
  for (const auto& [op, fields] : Steps()->cases)
    if (op == "capture") capture = fields->Resolved();
  ASSERT_NE(capture, nullptr);
  const SchemaNode* body = capture->Property("steps")->Resolved()->items->Resolved();
  std::set<std::string> in_schema;
  for (const auto& [op, fields] : body->cases) in_schema.insert(op);
  std::set<std::string> in_table;
  for (const OpInfo& info : AllOps())
    if (info.has(kCapturable)) in_table.insert(info.name);
  EXPECT_EQ(in_schema, in_table);
}

TEST_F(ScenarioSchemaTest, EveryFieldHasADescription) {
  auto check = [](const SchemaNode* n, const std::string& where) {
    EXPECT_FALSE(n->Resolved()->description.empty()) << where;
    for (const auto& [key, p] : n->Resolved()->properties) {
      EXPECT_TRUE(!p->description.empty() || !p->Resolved()->description.empty())
          << where << "." << key;
    }
  };
  check(&schema_->root(), "root");
  for (const auto& [op, fields] : Steps()->cases) check(fields, op);
  check(schema_->root().Property("buffers")->Resolved()->additional, "buffer");
}

TEST_F(ScenarioSchemaTest, DefaultsAgreeWithTheCode) {
  const YamlValue* g = schema_->root().Property("granularity")->default_value;
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(ParseSize(g->scalar), kDefaultGranularity);
  EXPECT_EQ(schema_->root().Property("version")->Resolved()->const_value->scalar, "1");
}

}  // namespace
}  // namespace vmm
