// Tables of a register-blocked kernel's instantiations, one for every block size up to the full
// one, so that the partial blocks at a matrix's edges run unrolled code too.
#pragma once

#include <array>
#include <utility>

namespace wick::cpu {

namespace detail {
template <template <int, int> class Block, int R, int... C>
constexpr auto block_row(std::integer_sequence<int, C...>) {
  return std::array{Block<R, C + 1>::fn...};
}
template <template <int, int> class Block, int Cols, int... R>
constexpr auto block_table(std::integer_sequence<int, R...>) {
  return std::array{block_row<Block, R + 1>(std::make_integer_sequence<int, Cols>())...};
}
}  // namespace detail

// table[r - 1][c - 1] == Block<r, c>::fn for 1 <= r <= Rows, 1 <= c <= Cols, where Block<r, c>
// names the kernel instantiation: `static constexpr auto fn = &kernel<r, c>;`.
template <template <int, int> class Block, int Rows, int Cols>
constexpr auto block_table() {
  return detail::block_table<Block, Cols>(std::make_integer_sequence<int, Rows>());
}

}  // namespace wick::cpu
