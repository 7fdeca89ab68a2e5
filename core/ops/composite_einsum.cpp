// einsum as permutes, reshapes, sums and bmm (composite_linalg.h).
//
// Note [einsum as bmm]
// Every operand is first brought into one common layout: its repeated subscripts are reduced to
// their diagonal, and its dims are permuted and reshaped so that dim i of every operand means the
// same subscript, with size 1 where the operand lacks it. The layout puts the output's dims
// first, in the output's order, and the summed subscripts after them. The operands are then
// combined left to right, two at a time (PyTorch's sumproduct_pair): for the pair, each dim is
//   - a batch dim (in both, kept),
//   - a left-only or right-only dim (kept),
//   - a contracted dim (in both, summed, and in no later operand), or
//   - summed in one operand alone (summed there before the product);
// the two are permuted to [batch, left, contracted] and [batch, contracted, right], flattened to
// three dims and multiplied with one bmm. No loop runs over elements, and the whole computation is
// differentiable through bmm's, sum's and the views' backward formulas.
#include <algorithm>
#include <array>

#include "core/ops.h"
#include "core/ops/composite_linalg.h"
#include "core/ops/op_utils.h"

namespace wick {

namespace {

constexpr int kLetters = 52;  // A-Z then a-z, the order of PyTorch's implicit output
constexpr int kEllipsis = -1;

int label_of(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' : 26 + (c - 'a'); }

// One term of the equation: its subscripts in order, kEllipsis for "...".
std::vector<int> parse_term(const std::string& eq, size_t begin, size_t end) {
  std::vector<int> labels;
  bool ellipsis = false;
  for (size_t i = begin; i < end; ++i) {
    char c = eq[i];
    if (c == ' ') continue;
    if (c == '.') {
      check_state(!ellipsis && i + 3 <= end && eq.compare(i, 3, "...") == 0, "einsum",
                  "einsum(): found '.' for operand that is not part of any ellipsis at index ", i,
                  " in the equation \"", eq, "\"");
      ellipsis = true;
      labels.push_back(kEllipsis);
      i += 2;
      continue;
    }
    check_state((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'), "einsum",
                "einsum(): invalid subscript given at index ", i, " in the equation string \"", eq,
                "\", subscripts must be in [a-zA-Z]");
    labels.push_back(label_of(c));
  }
  return labels;
}

// A dim of a pair is in exactly one group; the groups' dims are listed in layout order.
Tensor sumproduct_pair(Tensor left, Tensor right, const std::vector<bool>& summed) {
  int64_t ndim = left.dim();
  DimList batch, lonly, ronly, contracted;
  int64_t batch_size = 1, lsize = 1, rsize = 1, csize = 1;
  Shape out_shape = Shape::filled(ndim, 1);
  for (int64_t d = 0; d < ndim; ++d) {
    bool in_left = left.size(d) != 1, in_right = right.size(d) != 1;
    if (summed[d]) {
      if (in_left && in_right) {
        csize *= left.size(d);
      } else if (in_left) {
        left = sum(left, {d}, /*keepdim=*/true);
      } else if (in_right) {
        right = sum(right, {d}, /*keepdim=*/true);
      }
      contracted.push_back(d);  // size 1 on both sides unless contracted here
    } else if (in_left && in_right) {
      batch.push_back(d);
      batch_size *= left.size(d);
      out_shape[d] = left.size(d);
    } else if (in_left) {
      lonly.push_back(d);
      lsize *= left.size(d);
      out_shape[d] = left.size(d);
    } else {
      ronly.push_back(d);
      rsize *= right.size(d);
      out_shape[d] = right.size(d);
    }
  }
  auto join = [](std::initializer_list<const DimList*> parts) {
    DimList out;
    for (const DimList* p : parts) out.insert(out.end(), p->begin(), p->end());
    return out;
  };
  Tensor l = left.permute(join({&batch, &lonly, &contracted, &ronly}))
                 .reshape(Shape{batch_size, lsize, csize});
  Tensor r = right.permute(join({&batch, &contracted, &ronly, &lonly}))
                 .reshape(Shape{batch_size, csize, rsize});
  DimList order = join({&batch, &lonly, &ronly, &contracted});
  Shape grouped;
  for (int64_t d : order) grouped.push_back(out_shape[d]);
  DimList inverse(ndim);
  for (int64_t i = 0; i < ndim; ++i) inverse[order[i]] = i;
  return bmm(l, r).reshape(grouped).permute(inverse);
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands_in) {
  const char* op = "einsum";
  for (const Tensor& t : operands_in) detail::check_defined(op, t);
  check_state(!operands_in.empty(), op, "einsum(): must provide at least one operand");
  size_t arrow = equation.find("->");
  size_t lhs_end = arrow == std::string::npos ? equation.size() : arrow;
  std::vector<std::vector<int>> terms;
  for (size_t begin = 0;;) {
    size_t comma = equation.find(',', begin);
    size_t end = comma == std::string::npos || comma > lhs_end ? lhs_end : comma;
    terms.push_back(parse_term(equation, begin, end));
    if (end == lhs_end) break;
    begin = end + 1;
  }
  size_t n = operands_in.size();
  check_state(terms.size() <= n, op, "einsum(): fewer operands were provided than specified in ",
              "the equation \"", equation, "\": ", terms.size(), " subscript terms, ", n,
              " operands");
  check_state(terms.size() >= n, op, "einsum(): more operands were provided than specified in ",
              "the equation \"", equation, "\": ", terms.size(), " subscript terms, ", n,
              " operands");

  // Sizes: each operand's ellipsis covers the dims its letters do not; the ellipses broadcast.
  std::vector<Tensor> operands = operands_in;
  DType dtype = operands[0].dtype();
  for (const Tensor& t : operands) dtype = promote_types(dtype, t.dtype());
  std::array<int, kLetters> count{};
  int64_t ellipsis_dims = 0;
  std::vector<int64_t> operand_ellipsis(n, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t letters = 0;
    bool has_ellipsis = false;
    for (int l : terms[i]) {
      if (l == kEllipsis) {
        has_ellipsis = true;
      } else {
        ++letters;
        ++count[l];
      }
    }
    int64_t ndim = operands[i].dim();
    check_state(has_ellipsis ? letters <= ndim : letters == ndim, op,
                "einsum(): the number of subscripts in the equation (", letters,
                has_ellipsis ? ") is more than the number of dimensions ("
                             : ") does not match "
                               "the number of dimensions (",
                ndim, ") for operand ", i, has_ellipsis ? "" : " and no ellipsis was given");
    operand_ellipsis[i] = has_ellipsis ? ndim - letters : 0;
    ellipsis_dims = std::max(ellipsis_dims, operand_ellipsis[i]);
  }

  // The layout: output dims first (explicit, or the ellipsis then the letters used once, sorted),
  // then the summed letters. Ellipsis dim j has id kLetters + j.
  std::vector<int> layout;
  bool ellipsis_out = false;
  if (arrow != std::string::npos) {
    std::vector<int> out = parse_term(equation, arrow + 2, equation.size());
    std::array<bool, kLetters> seen{};
    for (int l : out) {
      if (l == kEllipsis) {
        check_state(!ellipsis_out, op, "einsum(): ellipsis can only appear once in the output");
        ellipsis_out = true;
        for (int64_t j = 0; j < ellipsis_dims; ++j) layout.push_back(kLetters + j);
        continue;
      }
      char c = l < 26 ? 'A' + l : 'a' + (l - 26);
      check_state(count[l] > 0, op, "einsum(): output subscript ", c,
                  " does not appear in the equation for any input operand");
      check_state(!seen[l], op, "einsum(): output subscript ", c,
                  " appears more than once in the output");
      seen[l] = true;
      layout.push_back(l);
    }
  } else {
    ellipsis_out = true;
    for (int64_t j = 0; j < ellipsis_dims; ++j) layout.push_back(kLetters + j);
    for (int l = 0; l < kLetters; ++l) {
      if (count[l] == 1) layout.push_back(l);
    }
  }
  int64_t out_dims = static_cast<int64_t>(layout.size());
  std::vector<int> position(kLetters + ellipsis_dims, -1);
  for (size_t i = 0; i < layout.size(); ++i) position[layout[i]] = static_cast<int>(i);
  for (int l = 0; l < kLetters; ++l) {
    if (count[l] > 0 && position[l] < 0) {
      position[l] = static_cast<int>(layout.size());
      layout.push_back(l);
    }
  }
  for (int64_t j = 0; j < ellipsis_dims && !ellipsis_out; ++j) {
    position[kLetters + j] = static_cast<int>(layout.size());
    layout.push_back(kLetters + j);
  }
  int64_t total = static_cast<int64_t>(layout.size());
  check_value(total <= kMaxDims, op, "einsum(): the equation \"", equation, "\" uses ", total,
              " distinct dims; at most ", kMaxDims, " are supported");

  // Each operand into the layout; sizes checked against what earlier operands said.
  std::vector<int64_t> size_of(kLetters + ellipsis_dims, 1);
  std::vector<bool> size_known(kLetters + ellipsis_dims, false);
  std::vector<std::vector<bool>> present(n, std::vector<bool>(total, false));
  for (size_t i = 0; i < n; ++i) {
    Tensor t = operands[i].to(dtype);
    std::vector<int> ids;  // the id of each dim of t
    for (int l : terms[i]) {
      if (l != kEllipsis) {
        ids.push_back(l);
        continue;
      }
      for (int64_t j = 0; j < operand_ellipsis[i]; ++j) {
        ids.push_back(kLetters + ellipsis_dims - operand_ellipsis[i] + j);  // right-aligned
      }
    }
    // A subscript repeated within an operand selects its diagonal (moved to the last dim).
    for (size_t a = 0; a < ids.size(); ++a) {
      for (size_t b = a + 1; b < ids.size(); ++b) {
        if (ids[a] != ids[b]) continue;
        char c = ids[a] < 26 ? 'A' + ids[a] : 'a' + (ids[a] - 26);
        check_state(t.size(a) == t.size(b), op, "einsum(): subscript ", c,
                    " is repeated for operand ", i, " but the sizes don't match, ", t.size(a),
                    " != ", t.size(b));
        t = diagonal(t, 0, static_cast<int64_t>(a), static_cast<int64_t>(b));
        int id = ids[a];
        ids.erase(ids.begin() + b);
        ids.erase(ids.begin() + a);
        ids.push_back(id);
        a = static_cast<size_t>(-1);  // start over: positions have moved
        break;
      }
    }
    DimList order(ids.size());
    for (size_t d = 0; d < ids.size(); ++d) order[d] = static_cast<int64_t>(d);
    std::sort(order.begin(), order.end(),
              [&](int64_t x, int64_t y) { return position[ids[x]] < position[ids[y]]; });
    Shape shape = Shape::filled(total, 1);
    for (size_t d = 0; d < ids.size(); ++d) {
      int id = ids[d];
      int64_t size = t.size(static_cast<int64_t>(d));
      if (size != 1) {
        if (size_known[id]) {
          char c = id < kLetters ? (id < 26 ? 'A' + id : 'a' + (id - 26)) : '.';
          check_state(size_of[id] == size, op, "einsum(): subscript ", c, " has size ", size,
                      " for operand ", i, " which does not broadcast with previously seen size ",
                      size_of[id]);
        }
        size_of[id] = size;
        size_known[id] = true;
      }
      shape[position[id]] = size;
      present[i][position[id]] = true;
    }
    operands[i] = t.permute(order).reshape(shape);
  }

  // Combine left to right; a summed dim is contracted at the last operand that has it.
  std::vector<bool> later(total, false);  // in some operand after the current pair
  auto summed_now = [&](size_t next) {
    std::vector<bool> summed(total, false);
    for (int64_t d = out_dims; d < total; ++d) {
      bool needed = false;
      for (size_t j = next + 1; j < n; ++j) needed = needed || present[j][d];
      summed[d] = !needed;
    }
    return summed;
  };
  Tensor result = operands[0];
  for (size_t i = 1; i < n; ++i) result = sumproduct_pair(result, operands[i], summed_now(i));
  if (total > out_dims) {
    DimList rest;
    for (int64_t d = out_dims; d < total; ++d) rest.push_back(d);
    result = sum(result, rest);
  }
  // A dim that was 1 in every operand but broadcast nowhere stays 1; the output shape is the
  // broadcast sizes.
  Shape out_shape;
  for (int64_t d = 0; d < out_dims; ++d) out_shape.push_back(result.size(d));
  return result.reshape(out_shape);
}

}  // namespace wick
