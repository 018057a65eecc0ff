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
    const Json* d = rd.Object(o, p, f.key, true);
    if (d == nullptr) return;
    for (auto it = d->begin(); it != d->end(); ++it) {
      Scalar value;
      if (!JsonToScalar(it.value(), &value)) {
        rd.Error(FieldReader::Child(FieldReader::Child(p, f.key), it.key()),
                 "expected a boolean, number or string, got " + TypeText(it.value()));
        continue;
      }
      (out.*M).emplace_back(it.key(), std::move(value));
    }
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
    const Json* map = rd.Object(o, p, f.key, true);
    if (map == nullptr) return;
    for (auto it = map->begin(); it != map->end(); ++it) {
      if (it->is_string()) {
        (out.*M).emplace_back(it.key(), it->template get<std::string>());
      } else {
        rd.Error(FieldReader::Child(p, f.key) + "/" + it.key(),
                 "expected a string, got " + TypeText(*it));
      }
    }
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
    const Json* list = rd.Array(o, p, f.key, true);
    if (list == nullptr) return;
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string ep = FieldReader::Child(p, f.key) + "/" + std::to_string(i);
      if (!(*list)[i].is_object()) {
        rd.Error(ep, "expected an object, got " + TypeText((*list)[i]));
        continue;
      }
      std::string first, second;
      rd.String((*list)[i], ep, kFirst, &first);
      rd.String((*list)[i], ep, kSecond, &second);
      (out.*M).emplace_back(std::move(first), std::move(second));
    }
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
    const Json* list = rd.Array(o, p, f.key, true);
    if (list == nullptr) return;
    for (size_t i = 0; i < list->size(); ++i) {
      if ((*list)[i].is_number_integer()) {
        (out.*M).push_back((*list)[i].template get<T>());
      } else {
        rd.Error(FieldReader::Child(p, f.key) + "/" + std::to_string(i),
                 "expected an integer, got " + TypeText((*list)[i]));
      }
    }
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
    const Json* list = rd.Array(o, p, f.key, true);
    if (list == nullptr) return;
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string ep = FieldReader::Child(p, f.key) + "/" + std::to_string(i);
      if (!(*list)[i].is_object()) {
        rd.Error(ep, "expected an object, got " + TypeText((*list)[i]));
        continue;
      }
      T e;
      Read(kTable(), rd, (*list)[i], ep, e);
      (out.*M).push_back(std::move(e));
    }
  };
  return f;
}

template <auto M>
Field<RecordOf<M>> StringList(const char* key, Stability stability) {
  using R = RecordOf<M>;
  Field<R> f{key, stability};
  f.write = [](const R& r, const char* k, Json& j) { j[k] = r.*M; };
  f.read = [](FieldReader& rd, const Json& o, const std::string& p, const Field<R>& f, R& out) {
    const Json* list = rd.Array(o, p, f.key, true);
    if (list == nullptr) return;
    for (size_t i = 0; i < list->size(); ++i) {
      if (!(*list)[i].is_string()) {
        rd.Error(FieldReader::Child(p, f.key) + "/" + std::to_string(i),
                 "expected a string, got " + TypeText((*list)[i]));
        continue;
      }
      (out.*M).push_back((*list)[i].get<std::string>());
    }
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
