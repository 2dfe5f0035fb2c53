// The number of fields of a plain struct (an aggregate), counted at compile
// time: the most initializers `T{...}` accepts. Code that must name every
// field of a struct (a hash of it, say) asserts the count it was written
// for, so a field added later fails the build there rather than being
// silently left out.
#pragma once

#include <cstddef>
#include <type_traits>

namespace kvscope {
namespace detail {
// Converts to any field's type, so it can stand for any initializer.
struct AnyField {
  template <class T>
  constexpr operator T() const;  // never defined: used unevaluated only
};

template <class T, class... Fields>
constexpr std::size_t aggregate_field_count_from() {
  if constexpr (requires { T{Fields{}..., AnyField{}}; }) return aggregate_field_count_from<T, Fields..., AnyField>();
  else return sizeof...(Fields);
}
}  // namespace detail

template <class T>
constexpr std::size_t aggregate_field_count() {
  static_assert(std::is_aggregate_v<T>, "only a plain struct's fields can be counted");
  return detail::aggregate_field_count_from<T>();
}

}  // namespace kvscope
