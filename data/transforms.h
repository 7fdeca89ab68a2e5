// Transforms: functions applied to one example's input as a dataset hands it out (normalise,
// random crop with padding, random horizontal flip, and a composition of these), written with wick
// ops. Each one works on an image tensor [..., H, W] (usually [C, H, W]).
//
// Note [reproducible transforms]
// A random transform draws its randomness from a Generator it is given, never from a global one.
// The DataLoader makes that Generator for each example from (loader seed, epoch, example index)
// - see SampleSeed and sample_generator_seed() - so the crop or flip an example gets depends
// only on those three numbers: not on how many workers there are, which worker built the batch,
// or when. Rerunning an epoch with the same seed gives the same batches, bit for bit; the next
// epoch gives new crops and flips. (PyTorch seeds each worker process instead, so its
// augmentations change with num_workers.)
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/generator.h"
#include "core/tensor.h"

namespace wick::data {

// A transform: takes one example's input and the example's Generator, returns the new input. An
// empty Transform means "leave the input as it is".
using Transform = std::function<Tensor(const Tensor& input, Generator& generator)>;

// Where one example's randomness comes from (Note [reproducible transforms]).
struct SampleSeed {
  uint64_t seed = 0;  // the loader's seed
  int64_t epoch = 0;  // the epoch being loaded
  int64_t index = 0;  // the example's index in the dataset
};

// The Generator seed for an example: a hash (splitmix64 rounds) of the three numbers.
uint64_t sample_generator_seed(const SampleSeed& s);

// Runs `transform` on `input` with a fresh Generator for `s`; returns `input` if it is empty.
Tensor apply_transform(const Transform& transform, const Tensor& input, const SampleSeed& s);

// (x - mean[c]) / std[c] for each channel c of a [C, H, W] float tensor. One mean and std apply to
// every channel; otherwise there must be one per channel. Deterministic.
class Normalize {
 public:
  Normalize(std::vector<double> mean, std::vector<double> std);
  Tensor operator()(const Tensor& input, Generator& generator) const;

 private:
  std::vector<double> mean_, std_;
};

// Pads the last two dims with `padding` zeros on every side (torchvision's Pad(padding) with its
// default constant fill). Deterministic.
class Pad {
 public:
  explicit Pad(int64_t padding);
  Tensor operator()(const Tensor& input, Generator& generator) const;

 private:
  int64_t padding_;
};

// Pads the last two dims with `padding` zeros on every side, then cuts out a size x size window
// at a uniformly random position (torchvision's RandomCrop(size, padding)).
class RandomCrop {
 public:
  explicit RandomCrop(int64_t size, int64_t padding = 0);
  Tensor operator()(const Tensor& input, Generator& generator) const;

 private:
  int64_t size_, padding_;
};

// Mirrors the last dim (left-right) with probability p.
class RandomHorizontalFlip {
 public:
  explicit RandomHorizontalFlip(double p = 0.5);
  Tensor operator()(const Tensor& input, Generator& generator) const;

 private:
  double p_;
};

// Runs transforms in order; they share the example's Generator, so each draws fresh numbers.
class Compose {
 public:
  explicit Compose(std::vector<Transform> transforms);
  Tensor operator()(const Tensor& input, Generator& generator) const;

 private:
  std::vector<Transform> transforms_;
};

}  // namespace wick::data
