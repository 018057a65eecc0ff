// The codecs of the report's field tables (record_fields.h): one factory per kind of value (an
// integer, a decimal string, a nested record, a list of records, ...), each making a row that
// writes and reads one member of a record through a pointer to it, and the row modifiers (If,
// With, Without). Internal to record_fields.cc.
#pragma once

#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "runner/report/record_fields.h"
#include "runner/report/scalar_json.h"

namespace vmm::report::fields::codecs {

template <typename M>
struct MemberOf;
template <typename R, typename T>
struct MemberOf<T R::*> {
  using Record = R;
  using Type = T;
};
template <auto M>
using RecordOf = typename MemberOf<decltype(M)>::Record;
template <auto M>
using TypeOf = typename MemberOf<decltype(M)>::Type;

// Reads the list (kArray) or object (kObject) at `key` of `o`: each element that `is` accepts goes
// to `each(element, its name or index)`, each other one is an error at its pointer ("expected
// <what>, got <type>").
enum class Container { kArray, kObject };
template <Container kind, typename Each>
void ReadElements(FieldReader& rd, const Json& o, const std::string& p, const char* key,
                  bool (*is)(const Json&), const char* what, Each each) {
  const Json* all =
      kind == Container::kArray ? rd.Array(o, p, key, true) : rd.Object(o, p, key, true);
  if (all == nullptr) return;
  const std::string base = FieldReader::Child(p, key);
  size_t i = 0;
  for (auto it = all->begin(); it != all->end(); ++it, ++i) {
    const std::string name = kind == Container::kArray ? std::to_string(i) : it.key();
    if (!is(*it)) {
      rd.Error(FieldReader::Child(base, name),
               std::string("expected ") + what + ", got " + TypeText(*it));
      continue;
    }
    each(*it, name);
  }
}
constexpr bool IsObject(const Json& j) { return j.is_object(); }
constexpr bool IsString(const Json& j) { return j.is_string(); }
constexpr bool IsInteger(const Json& j) { return j.is_number_integer(); }
constexpr bool IsScalar(const Json& j) {  // what JsonToScalar reads (null: a non-finite double)
  return j.is_null() || j.is_boolean() || j.is_number() || j.is_string();
}

// The codecs: one factory per kind of value. A row is written always unless the factory says
// when (an optional or a Boxed: when it holds a value) or If / With below do.

template <auto M>
Field<RecordOf<M>> Integer(const char* key, Stability stability, int64_t min = INT64_MIN,
                           int64_t max = INT64_MAX) {
  using R = RecordOf<M>;
  using T = TypeOf<M>;
  Field<R> f{key, stability};
  f.min = min;
  f.max = max;
  f.write = [](const R& r, const char* k, Json& j) { j[k] = r.*M; };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    const T lo = f.min == INT64_MIN ? std::numeric_limits<T>::min() : static_cast<T>(f.min);
    const T hi = f.max == INT64_MAX ? std::numeric_limits<T>::max() : static_cast<T>(f.max);
    rd.Integer(o, p, f.key, &(out.*M), lo, hi);
  };
  return f;
}

// A 64-bit count written as a decimal string ("2097152"); set when not 0.
template <auto M>
Field<RecordOf<M>> Decimal(const char* key, Stability stability) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) { j[k] = std::to_string(r.*M); };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    rd.DecimalString(o, p, f.key, &(out.*M));
  };
  return f;
}

// A value JSON holds as it is, read by FieldReader's `kRead` (String, Bool, Double).
template <auto M, auto kRead>
Field<RecordOf<M>> Plain(const char* key, Stability stability) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) { j[k] = r.*M; };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    (rd.*kRead)(o, p, f.key, &(out.*M));
  };
  return f;
}
template <auto M>
Field<RecordOf<M>> String(const char* key, Stability stability) {
  return Plain<M, &FieldReader::String>(key, stability);
}
template <auto M>
Field<RecordOf<M>> Bool(const char* key, Stability stability) {
  return Plain<M, &FieldReader::Bool>(key, stability);
}
template <auto M>
Field<RecordOf<M>> Double(const char* key, Stability stability) {
  return Plain<M, &FieldReader::Double>(key, stability);
}

// An std::optional<double> written when it has a value. `null_is_unset`: a null reads back as no
// value (else as NaN, as a non-finite number is written).
template <auto M, bool null_is_unset>
Field<RecordOf<M>> OptionalDouble(const char* key, Stability stability) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.written = [](const R& r) { return (r.*M).has_value(); };
  f.write = [](const R& r, const char* k, Json& j) { j[k] = *(r.*M); };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    if (auto it = o.find(f.key); null_is_unset && it != o.end() && it->is_null()) return;
    rd.Double(o, p, f.key, &(out.*M).emplace());
  };
  return f;
}

// An enum written by its name; `choices` lists the names for the reader's message.
template <auto M, auto kName, auto kParse>
Field<RecordOf<M>> Enum(const char* key, Stability stability, const char* choices) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.choices = choices;
  f.write = [](const R& r, const char* k, Json& j) { j[k] = kName(r.*M); };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    rd.Enum(o, p, f.key, &(out.*M), kParse, f.choices);
  };
  return f;
}

// Details: an object of scalars in the executor's order.
template <auto M>
Field<RecordOf<M>> DetailMap(const char* key, Stability stability) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) {
    Json d = Json::object();
    for (const auto& [name, value] : r.*M) d[name] = ScalarToJson(value);
    j[k] = std::move(d);
  };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    ReadElements<Container::kObject>(rd, o, p, f.key, IsScalar, "a boolean, number or string",
                                     [&](const Json& value, const std::string& name) {
                                       Scalar scalar;
                                       if (JsonToScalar(value, &scalar))
                                         (out.*M).emplace_back(name, std::move(scalar));
                                     });
  };
  return f;
}

// A nested record, written by its table `kTable`: a Boxed<T> (written when it holds one), or a T
// (written always).
template <auto M, auto kTable>
Field<RecordOf<M>> Object(const char* key, Stability stability) {
  using R = RecordOf<M>;
  using T = TypeOf<M>;
  constexpr bool kBoxed = requires(const T& t) { t.has_value(); };
  Field<R> f{key, stability};
  if constexpr (kBoxed) f.written = [](const R& r) { return (r.*M).has_value(); };
  f.write = [](const R& r, const char* k, Json& j) {
    if constexpr (kBoxed) {
      j[k] = Write(kTable(), *(r.*M));
    } else {
      j[k] = Write(kTable(), r.*M);
    }
  };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    const Json* n = rd.Object(o, p, f.key, true);
    if (n == nullptr) return;
    if constexpr (kBoxed) {
      Read(kTable(), rd, *n, FieldReader::Child(p, f.key), (out.*M).emplace());
    } else {
      Read(kTable(), rd, *n, FieldReader::Child(p, f.key), out.*M);
    }
  };
  return f;
}

// A nested object whose rows are fields of R itself (`kTable` is a table of R).
template <typename R, auto kTable>
Field<R> Group(const char* key, Stability stability) {
  Field<R> f{key, stability};
  f.group = kTable;
  f.write = [](const R& r, const char* k, Json& j) { j[k] = Write(kTable(), r); };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    if (const Json* n = rd.Object(o, p, f.key, true))
      Read(kTable(), rd, *n, FieldReader::Child(p, f.key), out);
  };
  return f;
}

// A string the writer always writes as `kValue` (the reader checks its type only).
template <typename R, const char* kValue>
Field<R> Constant(const char* key, Stability stability) {
  Field<R> f{key, stability};
  f.write = [](const R&, const char* k, Json& j) { j[k] = kValue; };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R&) {
    std::string ignored;
    rd.String(o, p, f.key, &ignored);
  };
  return f;
}

// A value the writer derives from other fields (a graph's edges from its nodes' dependencies);
// the reader has nothing to read back.
template <typename R, auto kDerive>
Field<R> Derived(const char* key, Stability stability) {
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) { j[k] = kDerive(r); };
  f.read = [](FieldReader&, const Json&, const std::string&, const Field<R>&, R&) {};
  return f;
}

// Name -> text pairs as an object of strings (the report's vars), in their order.
template <auto M>
Field<RecordOf<M>> StringMap(const char* key, Stability stability) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) {
    Json map = Json::object();
    for (const auto& [name, value] : r.*M) map[name] = value;
    j[k] = std::move(map);
  };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    ReadElements<Container::kObject>(rd, o, p, f.key, IsString, "a string",
                                     [&](const Json& value, const std::string& name) {
                                       (out.*M).emplace_back(name, value.get<std::string>());
                                     });
  };
  return f;
}

// Pairs of strings as a list of objects {kFirst: ..., kSecond: ...}.
template <auto M, const char* kFirst, const char* kSecond>
Field<RecordOf<M>> PairList(const char* key, Stability stability) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) {
    Json list = Json::array();
    for (const auto& [first, second] : r.*M) list.push_back({{kFirst, first}, {kSecond, second}});
    j[k] = std::move(list);
  };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    const std::string base = FieldReader::Child(p, f.key);
    ReadElements<Container::kArray>(rd, o, p, f.key, IsObject, "an object",
                                    [&](const Json& e, const std::string& i) {
                                      std::string first, second;
                                      rd.String(e, FieldReader::Child(base, i), kFirst, &first);
                                      rd.String(e, FieldReader::Child(base, i), kSecond, &second);
                                      (out.*M).emplace_back(std::move(first), std::move(second));
                                    });
  };
  return f;
}

template <auto M>
Field<RecordOf<M>> IntegerList(const char* key, Stability stability) {
  using R = RecordOf<M>;
  using T = typename TypeOf<M>::value_type;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) { j[k] = r.*M; };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    ReadElements<Container::kArray>(
        rd, o, p, f.key, IsInteger, "an integer",
        [&](const Json& e, const std::string&) { (out.*M).push_back(e.get<T>()); });
  };
  return f;
}

// A list of nested records, each written by the element's table `kTable`.
template <auto M, auto kTable>
Field<RecordOf<M>> ObjectList(const char* key, Stability stability) {
  using R = RecordOf<M>;
  using T = typename TypeOf<M>::value_type;
  Field<R> f{key, stability};
  f.count = [](const R& r) { return (r.*M).size(); };
  f.element = [](const R& r, size_t i) { return Write(kTable(), (r.*M)[i]); };
  f.write = [](const R& r, const char* k, Json& j) {
    Json list = Json::array();
    for (const T& e : r.*M) list.push_back(Write(kTable(), e));
    j[k] = std::move(list);
  };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    const std::string base = FieldReader::Child(p, f.key);
    ReadElements<Container::kArray>(rd, o, p, f.key, IsObject, "an object",
                                    [&](const Json& e, const std::string& i) {
                                      T element;
                                      Read(kTable(), rd, e, FieldReader::Child(base, i), element);
                                      (out.*M).push_back(std::move(element));
                                    });
  };
  return f;
}

template <auto M>
Field<RecordOf<M>> StringList(const char* key, Stability stability) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) { j[k] = r.*M; };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    ReadElements<Container::kArray>(
        rd, o, p, f.key, IsString, "a string",
        [&](const Json& e, const std::string&) { (out.*M).push_back(e.get<std::string>()); });
  };
  return f;
}

// A string that is null when empty (std::string) or absent (std::optional<std::string>).
template <auto M>
Field<RecordOf<M>> NullableString(const char* key, Stability stability) {
  using R = RecordOf<M>;
  using T = TypeOf<M>;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) {
    if constexpr (std::is_same_v<T, std::string>) {
      j[k] = (r.*M).empty() ? Json(nullptr) : Json(r.*M);
    } else {
      j[k] = (r.*M) ? Json(*(r.*M)) : Json(nullptr);
    }
  };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    std::optional<std::string> text;
    rd.NullableString(o, p, f.key, &text);
    if constexpr (std::is_same_v<T, std::string>) {
      out.*M = text.value_or("");
    } else {
      out.*M = std::move(text);
    }
  };
  return f;
}

// An std::optional<int> that is null when absent.
template <auto M>
Field<RecordOf<M>> NullableInteger(const char* key, Stability stability, int64_t min, int64_t max) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.min = min;
  f.max = max;
  f.write = [](const R& r, const char* k, Json& j) {
    j[k] = (r.*M) ? Json(*(r.*M)) : Json(nullptr);
  };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    const Json* j = rd.Member(o, p, f.key, true);
    if (j == nullptr || j->is_null()) return;
    rd.Integer(o, p, f.key, &(out.*M).emplace(), static_cast<int>(f.min), static_cast<int>(f.max));
  };
  return f;
}

// Row modifiers: written only when `pred` holds (and read when present); `With`: also required
// by the reader whenever the key `other` is present.
template <typename R>
Field<R> If(Field<R> f, bool (*pred)(const R&)) {
  f.written = pred;
  return f;
}
template <typename R>
Field<R> With(Field<R> f, bool (*pred)(const R&), const char* other) {
  f.written = pred;
  f.with = other;
  return f;
}
template <typename R>
Field<R> Without(Field<R> f, bool (*pred)(const R&), const char* other) {
  f.written = pred;
  f.without = other;
  return f;
}

}  // namespace vmm::report::fields::codecs
