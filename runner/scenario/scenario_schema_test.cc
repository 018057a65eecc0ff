// The embedded scenario schema against the code: the op table (runner/vocab/ops.def) and the
// schema must say the same thing about every op, field descriptions exist, defaults agree.
#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "runner/scenario/parse.h"
#include "runner/scenario/size.h"
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
  const SchemaNode* Steps() const {
    return schema_->root().Property("steps")->Resolved()->items->Resolved();
  }
  std::unique_ptr<JsonSchema> schema_;
};

TEST_F(ScenarioSchemaTest, OpsMatchTheOpTableInOrder) {
  const SchemaNode* steps = Steps();
  EXPECT_EQ(steps->discriminator, "op");
  ASSERT_EQ(steps->cases.size(), AllOps().size());
  for (size_t i = 0; i < AllOps().size(); ++i)
    EXPECT_EQ(steps->cases[i].first, AllOps()[i].name) << "row " << i;
  EXPECT_EQ(steps->Property("op")->Resolved()->enum_values.size(), AllOps().size());
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
