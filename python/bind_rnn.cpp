// Recurrent layers: torch's cell functions (wick.lstm_cell, gru_cell, rnn_tanh_cell,
// rnn_relu_cell) and wick._C._nn._rnn, the multi-layer recurrence that wick/nn/modules/rnn.py
// calls with its parameters (nn/layers/recurrent.h, core/ops/rnn.h).
#include <pybind11/stl.h>

#include "nn/layers/recurrent.h"
#include "python/bind_common.h"

namespace wick::python {

namespace {

RnnMode mode_of(const std::string& mode) {
  if (mode == "RNN_TANH") return RnnMode::kTanh;
  if (mode == "RNN_RELU") return RnnMode::kRelu;
  if (mode == "LSTM") return RnnMode::kLstm;
  if (mode == "GRU") return RnnMode::kGru;
  throw py::value_error("Unknown mode '" + mode +
                        "'; expected 'RNN_TANH', 'RNN_RELU', 'LSTM' or 'GRU'");
}

// torch.lstm_cell takes hx as a pair (h, c).
std::pair<Tensor, Tensor> state_pair(py::handle hx) {
  bool ok = py::isinstance<py::sequence>(hx) && !py::isinstance<Tensor>(hx) && py::len(hx) == 2;
  if (!ok) throw py::type_error("lstm_cell(): hx must be a tuple of two tensors (h, c)");
  py::sequence s = py::reinterpret_borrow<py::sequence>(hx);
  return {to_tensor(s[0], "hx[0]"), to_tensor(s[1], "hx[1]")};
}

}  // namespace

void init_rnn(py::module_& root) {
  root.def(
      "lstm_cell",
      [](const Tensor& input, py::handle hx, const Tensor& w_ih, const Tensor& w_hh,
         py::handle b_ih, py::handle b_hh) {
        auto [h, c] = state_pair(hx);
        return lstm_cell(input, h, c, w_ih, w_hh, optional_tensor(b_ih, "b_ih"),
                         optional_tensor(b_hh, "b_hh"));
      },
      py::arg("input"), py::arg("hx"), py::arg("w_ih"), py::arg("w_hh"),
      py::arg("b_ih") = py::none(), py::arg("b_hh") = py::none());
  using Cell = Tensor (*)(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                          const Tensor&);
  for (auto [name, fn] : {std::pair<const char*, Cell>{"gru_cell", gru_cell},
                          {"rnn_tanh_cell", rnn_tanh_cell},
                          {"rnn_relu_cell", rnn_relu_cell}}) {
    root.def(
        name,
        [fn = fn](const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                  py::handle b_ih, py::handle b_hh) {
          return fn(input, hx, w_ih, w_hh, optional_tensor(b_ih, "b_ih"),
                    optional_tensor(b_hh, "b_hh"));
        },
        py::arg("input"), py::arg("hx"), py::arg("w_ih"), py::arg("w_hh"),
        py::arg("b_ih") = py::none(), py::arg("b_hh") = py::none());
  }

  py::module_ m = root.attr("_nn").cast<py::module_>();
  m.def(
      "_rnn",
      [](const std::string& mode, const Tensor& input, const std::vector<int64_t>& batch_sizes,
         const Tensor& hx, py::handle cx, const std::vector<Tensor>& weights, bool has_biases,
         int64_t num_layers, double dropout, bool training, bool bidirectional) {
        nn::RnnOutput r =
            nn::rnn(mode_of(mode), input, batch_sizes, hx, optional_tensor(cx, "cx"), weights,
                    has_biases, num_layers, dropout, training, bidirectional);
        return py::make_tuple(r.output, r.h_n, r.c_n.defined() ? py::cast(r.c_n) : py::none());
      },
      py::arg("mode"), py::arg("input"), py::arg("batch_sizes"), py::arg("hx"), py::arg("cx"),
      py::arg("weights"), py::arg("has_biases"), py::arg("num_layers"), py::arg("dropout"),
      py::arg("training"), py::arg("bidirectional"),
      "Every layer and direction of RNN_TANH/RNN_RELU/LSTM/GRU; batch_sizes empty for a "
      "[T, B, I] input, else those of packed data [N, I]. Returns (output, h_n, c_n or None).");
}

}  // namespace wick::python
