#include "runner/scenario/scenario_builder.h"

#include <cstdlib>
#include <iterator>
#include <limits>
#include <memory>

#include "runner/scenario/duration.h"
#include "runner/scenario/size.h"
#include "runner/vocab/access.h"

namespace vmm {

class ScenarioTreeBuilder {
 public:
  // `release_steps`: the document is the builder's own (BuildScenario(YamlValue&&)), and each
  // step's tree is freed once the step is built, so that an expanded document and its steps are
  // never both whole in memory (a loop of 80,000 steps: about 60 MB of YAML).
  ScenarioTreeBuilder(const JsonSchema& schema, const std::string& file,
                      std::vector<Diagnostic>* diagnostics, bool release_steps)
      : schema_(schema),
        document_(std::make_shared<const SourceOrigin>(SourceOrigin{file, ""})),
        diagnostics_(diagnostics),
        release_steps_(release_steps) {}

  std::optional<Scenario> Build(const YamlValue& doc) {
    Scenario s;
    s.file = document_->file;
    const SchemaNode& root = schema_.root();
    if (const YamlValue* v = Value(doc, root, "version")) s.version = static_cast<int>(Integer(*v));
    if (const YamlValue* v = doc.Find("name")) s.name = v->scalar;
    if (const YamlValue* v = doc.Find("description")) s.description = v->scalar;
    s.granularity.loc = Loc(doc);
    if (const YamlValue* v = Value(doc, root, "granularity")) {
      s.granularity.value = Size(*v, "granularity");
      s.granularity.set = doc.Find("granularity") != nullptr;
      s.granularity.loc = Loc(*v);
    }
    if (const YamlValue* buffers = doc.Find("buffers"))
      for (const YamlMember& m : buffers->members) s.buffers.push_back(Tensor(*buffers, m));
    if (const YamlValue* req = doc.Find("requires")) {
      if (const YamlValue* v = req->Find("backend"))
        s.requires_.backend = {v->scalar, Loc(*v), true};
      if (const YamlValue* v = req->Find("devices"))
        s.requires_.devices = {static_cast<uint64_t>(Integer(*v)), Loc(*v), true};
      if (const YamlValue* v = req->Find("device_memory"))
        s.requires_.device_memory = {Size(*v, "device_memory"), Loc(*v), true};
      if (const YamlValue* v = req->Find("capabilities"))
        for (const YamlValue& c : v->items)
          s.requires_.capabilities.push_back({c.scalar, Loc(c), true});
    }
    if (const YamlValue* report = doc.Find("report"))
      if (const YamlValue* v = report->Find("fold_loops")) s.fold_loops = v->scalar == "true";
    if (const YamlValue* views = doc.Find("views")) {
      for (const YamlMember& m : views->members) {
        BufferDecl v = Tensor(*views, m);
        if (const YamlValue* of = m.value.Find("of")) v.of = {of->scalar, Loc(*of), true};
        v.offset.loc = v.loc;
        if (const YamlValue* offset = m.value.Find("offset"))
          v.offset = {Size(*offset, "offset"), Loc(*offset), true};
        s.views.push_back(std::move(v));
      }
    }
    // Top-level steps and isolate blocks' steps are ops (dispatched on `op`), isolate blocks or
    // groups of them (`together`).
    const SchemaNode* step_schema = schema_.Find("#/definitions/step");
    if (const YamlValue* steps = doc.Find("steps"); steps != nullptr && step_schema != nullptr)
      s.steps = Steps(*steps, step_schema);
    if (failed_) return std::nullopt;
    return s;
  }

  // One top-level step (StepwiseScenarioBuilder).
  void AddTopLevelStep(const YamlValue& item, std::vector<Step>* steps) {
    const SchemaNode* step_schema = schema_.Find("#/definitions/step");
    if (step_schema != nullptr) Item(item, step_schema, step_schema->Resolved(), steps);
  }
  void set_diagnostics(std::vector<Diagnostic>* diagnostics) { diagnostics_ = diagnostics; }

 private:
  SourceLoc Loc(const YamlValue& v) const { return LocationOf(document_, v); }

  // A buffer or view entry: its name, where it is declared, shape and dtype.
  BufferDecl Tensor(const YamlValue& map, const YamlMember& m) {
    BufferDecl b;
    b.name = m.key;
    b.loc = LocationOf(document_, map.origin, m.line, m.column);
    if (const YamlValue* shape = m.value.Find("shape"))
      for (const YamlValue& d : shape->items) b.shape.push_back(static_cast<uint64_t>(Integer(d)));
    if (const YamlValue* dtype = m.value.Find("dtype")) b.dtype = dtype->scalar;
    return b;
  }

  // The member `key` of `map`, or the schema default of property `key`, or nullptr.
  static const YamlValue* Value(const YamlValue& map, const SchemaNode& schema, const char* key) {
    if (const YamlValue* v = map.Find(key)) return v;
    const SchemaNode* p = schema.Resolved()->Property(key);
    return p != nullptr ? p->default_value : nullptr;
  }

  void Error(const YamlValue& at, std::string message) {
    failed_ = true;
    diagnostics_->push_back(Diagnostic{Loc(at), std::move(message)});
  }

  int64_t Integer(const YamlValue& v) {
    int64_t i = 0;
    // Bit patterns may be written in hex ("0xA5A5A5A5"); the schema says where.
    if (v.scalar.size() > 2 && v.scalar[0] == '0' && (v.scalar[1] == 'x' || v.scalar[1] == 'X')) {
      char* end = nullptr;
      const unsigned long long bits = std::strtoull(v.scalar.c_str() + 2, &end, 16);
      if (end == v.scalar.c_str() + v.scalar.size() && v.scalar.size() <= 18)
        return static_cast<int64_t>(bits);
    }
    if (!YamlIsInteger(v, &i)) Error(v, "expected an integer, got " + DescribeYamlValue(v));
    return i;
  }

  uint64_t Size(const YamlValue& v, const std::string& key) {
    bool overflow = false;
    if (std::optional<uint64_t> bytes = ParseSize(v.scalar, &overflow)) return *bytes;
    int64_t i = 0;
    if (!overflow && YamlIsInteger(v, &i) && i >= 0) return static_cast<uint64_t>(i);
    Error(v, overflow ? "'" + key + "' is too large: " + DescribeYamlValue(v) +
                            " does not fit in 64 bits"
                      : "'" + key + "' must be a size, got " + DescribeYamlValue(v));
    return 0;
  }

  uint64_t Duration(const YamlValue& v, const std::string& key) {
    bool overflow = false;
    if (std::optional<uint64_t> ns = ParseDuration(v.scalar, &overflow)) return *ns;
    Error(v, overflow ? "'" + key + "' is too long: " + DescribeYamlValue(v) +
                            " does not fit in 64 bits of nanoseconds"
                      : "'" + key + "' must be a duration such as 200ms or 5s, got " +
                            DescribeYamlValue(v));
    return 0;
  }

  // A block's or a group's step: its op, where it starts and its `name`.
  Step Headed(const YamlValue& item, Op op) {
    Step step;
    step.op = op;
    step.loc = Loc(item);
    if (const YamlValue* name = item.Find("name")) Put(&step.name, name->scalar, Loc(*name), true);
    return step;
  }

  // `{isolate: {expect: ..., kill_after: ...}, name: ..., steps: [...]}`: op kIsolate, the body in
  // `steps` (its items are steps or blocks again; the validator refuses nesting).
  Step Block(const YamlValue& item, const SchemaNode* dispatch) {
    Step step = Headed(item, Op::kIsolate);
    const YamlValue* spec = item.Find("isolate");
    IsolateSpec& is = step.mutable_isolate();
    const SourceLoc at = spec != nullptr ? Loc(*spec) : step.loc;
    Put(&is.expect, std::string("ok"), at, false);
    if (const YamlValue* expect = spec != nullptr ? spec->Find("expect") : nullptr) {
      if (expect->IsScalar()) {
        Put(&is.expect, expect->scalar, Loc(*expect), true);
      } else if (const YamlValue* signal = expect->Find("signal")) {
        Put(&is.expect, std::string(), Loc(*expect), true);
        Put(&is.signal, signal->scalar, Loc(*signal), true);
      } else if (const YamlValue* timeout = expect->Find("timeout")) {
        Put(&is.expect, std::string(), Loc(*expect), true);
        Put(&is.timeout, Duration(*timeout, "timeout"), Loc(*timeout), true);
      }
    }
    if (const YamlValue* step_at = spec != nullptr ? spec->Find("at") : nullptr)
      Put(&is.at, step_at->scalar, Loc(*step_at), true);
    const SchemaNode* spec_schema = schema_.Find("#/definitions/isolate");
    const YamlValue* kill = spec != nullptr ? spec->Find("kill_after") : nullptr;
    const bool kill_set = kill != nullptr;
    if (!kill_set && spec_schema != nullptr) kill = Value(YamlValue(), *spec_schema, "kill_after");
    if (kill != nullptr)
      Put(&is.kill_after, Duration(*kill, "kill_after"), kill_set ? Loc(*kill) : at, kill_set);
    if (const YamlValue* body = item.Find("steps")) step.steps = Steps(*body, dispatch);
    return step;
  }

  // `{together: [block, ...], name: ...}`: op kTogether, its isolate blocks in `steps` (the schema
  // admits only blocks there; the validator refuses a group inside a block).
  Step Group(const YamlValue& item, const SchemaNode* dispatch) {
    Step step = Headed(item, Op::kTogether);
    if (const YamlValue* blocks = item.Find("together")) step.steps = Steps(*blocks, dispatch);
    return step;
  }

  // `{threads: [{thread: NAME, steps: [...]}, ...], name: ...}`: op kThreads, one kThread step per
  // thread in `steps` (its name the thread's, its steps in its own `steps`).
  Step Threads(const YamlValue& item, const SchemaNode* dispatch) {
    Step step = Headed(item, Op::kThreads);
    const YamlValue* threads = item.Find("threads");
    if (threads == nullptr) return step;
    for (const YamlValue& t : threads->items) {
      Step& thread = step.steps.emplace_back();
      thread.op = Op::kThread;
      thread.loc = Loc(t);
      if (const YamlValue* name = t.Find("thread"))
        Put(&thread.name, name->scalar, Loc(*name), true);
      if (const YamlValue* context = t.Find("context"))  // the planner reads it (Step::keys)
        thread.mutable_keys().entries.push_back(
            {"context", {context->scalar, Loc(*context), true}});
      if (const YamlValue* body = t.Find("steps")) thread.steps = Steps(*body, dispatch);
    }
    return step;
  }

  // Frees a step's tree when the step is built (see release_steps_). The document is not const:
  // BuildScenario(YamlValue&&) owns it, and nothing reads a step's tree after its step is built.
  struct ReleaseWhenBuilt {
    ScenarioTreeBuilder* builder;
    const YamlValue& item;
    ~ReleaseWhenBuilt() {
      if (builder->release_steps_) const_cast<YamlValue&>(item) = YamlValue{};
    }
  };

  std::vector<Step> Steps(const YamlValue& list, const SchemaNode* item_schema) {
    std::vector<Step> steps;
    steps.reserve(list.items.size());
    const SchemaNode* dispatch = item_schema->Resolved();
    for (const YamlValue& item : list.items) {
      const ReleaseWhenBuilt release{this, item};
      Item(item, item_schema, dispatch, &steps);
    }
    return steps;
  }

  // Appends the step `item` (an op, an isolate block, a group or threads) to *steps.
  void Item(const YamlValue& item, const SchemaNode* item_schema, const SchemaNode* dispatch,
            std::vector<Step>* steps) {
    if (item.Find("isolate") != nullptr) return steps->push_back(Block(item, item_schema));
    if (item.Find("together") != nullptr) return steps->push_back(Group(item, item_schema));
    if (item.Find("threads") != nullptr) return steps->push_back(Threads(item, item_schema));
    Step& step = steps->emplace_back();
    step.loc = Loc(item);
    const YamlValue* op = item.Find(dispatch->discriminator);
    const SchemaNode* fields = op != nullptr ? dispatch->Case(op->scalar) : nullptr;
    if (op == nullptr || fields == nullptr || !ParseOpName(op->scalar, &step.op)) {
      Error(item, "internal error: step without a known op passed the schema");
      steps->pop_back();
      return;
    }
    for (const auto& [key, prop] : fields->Resolved()->properties) {
      if (key == dispatch->discriminator) continue;
      const YamlValue* v = item.Find(key);
      const bool set = v != nullptr;
      // Most ops take repeat and fatal; their defaults (once, not fatal) are what an absent field
      // reads, so they take no room in the step (Step).
      if (!set && (key == "repeat" || key == "fatal")) continue;
      if (!set) v = prop->Resolved()->default_value;
      if (v == nullptr) v = prop->default_value;
      if (v == nullptr) continue;
      Assign(&step, key, *v, set ? Loc(*v) : step.loc, set, prop);
    }
  }

  template <typename T>
  static void Put(Located<T>* field, T value, SourceLoc loc, bool set) {
    field->value = std::move(value);
    field->loc = std::move(loc);
    field->set = set;
  }

  // `loc` by value: each key's branch moves it into the one field it sets (a copy would touch the
  // shared origin's count, per key of every step of a loop).
  void Assign(Step* step, const std::string& key, const YamlValue& v, SourceLoc loc, bool set,
              const SchemaNode* prop) {
    if (key == "access" && v.IsMap()) {  // set_access's per-device form (the schema checked it)
      if (v.members.empty())
        Error(v, "'access' names no device; give at least one, e.g. {0: read_write, 1: read}");
      for (const YamlMember& m : v.members) {
        DeviceAccessEntry e;
        const SourceLoc key_loc = LocationOf(document_, v.origin, m.line, m.column);
        YamlValue key;
        key.kind = YamlValue::Kind::kScalar;
        key.scalar = m.key;
        int64_t device = -1;
        if (!YamlIsInteger(key, &device) || device < 0 || device >= kMaxScenarioDevices) {
          failed_ = true;
          diagnostics_->push_back(
              Diagnostic{key_loc, "'access' maps device numbers to an access; '" + m.key +
                                      "' is not a device number (0 to " +
                                      std::to_string(kMaxScenarioDevices - 1) + ")"});
          continue;
        }
        e.device = {static_cast<uint64_t>(device), key_loc, true};
        e.access = {m.value.scalar, Loc(m.value), true};
        step->mutable_device_access().push_back(std::move(e));
      }
      return;
    }
    if (v.IsMap()) {
      for (const auto& f : kStepMapFields) {
        if (key != f.key) continue;
        StepMap& map = (step->*f.field)();
        map.loc = std::move(loc);
        map.set = set;
        for (const YamlMember& m : v.members)
          map.entries.push_back(
              {m.key,
               {m.value.scalar, LocationOf(document_, m.value.origin, m.value.line, m.value.column),
                true}});
        return;
      }
    }
    if (key == "name") return Put(&step->name, v.scalar, std::move(loc), set);
    for (const auto& f : kStepTextFields)
      if (key == f.key) return Put(&(step->*f.field)(), v.scalar, std::move(loc), set);
    for (const auto& f : kStepSizeFields)
      if (key == f.key) return Put(&(step->*f.field)(), Size(v, key), std::move(loc), set);
    for (const auto& f : kStepIntegerFields)
      if (key == f.key)
        return Put(&(step->*f.field)(), static_cast<uint64_t>(Integer(v)), std::move(loc), set);
    for (const auto& f : kStepFlagFields)
      if (key == f.key) return Put(&(step->*f.field)(), v.scalar == "true", std::move(loc), set);
    for (const auto& f : kStepDurationFields)
      if (key == f.key) return Put(&(step->*f.field)(), Duration(v, key), std::move(loc), set);
    for (const auto& f : kStepListFields) {
      if (key != f.key) continue;
      auto& list = (step->*f.field)();
      for (const YamlValue& item : v.items) list.push_back({item.scalar, Loc(item), true});
      return;
    }
    if (key == "steps") {
      const SchemaNode* items = prop->Resolved()->items;
      if (items != nullptr) step->steps = Steps(v, items);
      return;
    }
    if (key == "branches") {  // a list of {steps: [...]}
      const SchemaNode* branch = prop->Resolved()->items;
      const SchemaNode* body = branch != nullptr ? branch->Resolved()->Property("steps") : nullptr;
      const SchemaNode* items = body != nullptr ? body->Resolved()->items : nullptr;
      if (items == nullptr) return Error(v, "internal error: 'branches' has no step schema");
      for (const YamlValue& b : v.items) {
        const YamlValue* steps = b.Find("steps");
        step->mutable_branches().push_back(steps != nullptr ? Steps(*steps, items)
                                                            : std::vector<Step>{});
      }
      return;
    }
    if (v.IsScalar()) {  // a key of one op: the planner reads its text (Step::keys)
      step->mutable_keys().entries.push_back({key, {v.scalar, std::move(loc), set}});
      return;
    }
    Error(v, "internal error: the schema's key '" + key + "' has no field in Step");
  }

  const JsonSchema& schema_;
  // The scenario file; every location of the text written once in it shares this origin.
  const std::shared_ptr<const SourceOrigin> document_;
  std::vector<Diagnostic>* diagnostics_;
  const bool release_steps_;
  bool failed_ = false;
};

std::optional<Scenario> BuildScenario(const YamlValue& document, const JsonSchema& schema,
                                      const std::string& file,
                                      std::vector<Diagnostic>* diagnostics) {
  return ScenarioTreeBuilder(schema, file, diagnostics, false).Build(document);
}

std::optional<Scenario> BuildScenario(YamlValue&& document, const JsonSchema& schema,
                                      const std::string& file,
                                      std::vector<Diagnostic>* diagnostics) {
  return ScenarioTreeBuilder(schema, file, diagnostics, true).Build(document);
}

StepwiseScenarioBuilder::StepwiseScenarioBuilder(const JsonSchema& schema, const std::string& file,
                                                 std::vector<Diagnostic>* diagnostics)
    : diagnostics_(diagnostics),
      builder_(std::make_unique<ScenarioTreeBuilder>(schema, file, &step_diagnostics_, false)) {}

StepwiseScenarioBuilder::~StepwiseScenarioBuilder() = default;

void StepwiseScenarioBuilder::Add(const YamlValue& step) {
  builder_->AddTopLevelStep(step, &steps_);
}

std::optional<Scenario> StepwiseScenarioBuilder::Finish(const YamlValue& document) {
  builder_->set_diagnostics(diagnostics_);
  std::optional<Scenario> s = builder_->Build(document);
  diagnostics_->insert(diagnostics_->end(), std::make_move_iterator(step_diagnostics_.begin()),
                       std::make_move_iterator(step_diagnostics_.end()));
  if (!s) return std::nullopt;
  steps_.insert(steps_.end(), std::make_move_iterator(s->steps.begin()),
                std::make_move_iterator(s->steps.end()));
  s->steps = std::move(steps_);
  return s;
}

}  // namespace vmm
