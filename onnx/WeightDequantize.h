// Folding a QDQ model's constant DequantizeLinear nodes (docs/design.md §3.2, QDQ fusion): a
// DequantizeLinear of an initializer (a convolution's s8 weight, its int32 bias) computes the same
// float32 tensor on every run, so it becomes that float32 weight at compile time and the node
// needs no kernel. The node stays in the graph: the int8 fusions (QdqFusion.h, QdqConv.h) read
// the integer weights through it, and a layer they do not fuse (a 3-channel stem, a classifier
// whose float output is the graph's) takes the tuned float path with its weight re-laid out like
// any other instead of dequantizing it on every run.
#ifndef OPGEN_ONNX_WEIGHT_DEQUANTIZE_H
#define OPGEN_ONNX_WEIGHT_DEQUANTIZE_H

#include "onnx/ModelGraph.h"

#include <vector>

namespace opgen::onnx_import {

// A constant's elements as numbers: its small values, float32 data or raw u8, i8 or i32 bytes;
// empty when the graph was read without its weights.
std::vector<double> constant_elements(const GraphTensor &t);

// Turns the output of every such DequantizeLinear of `g` into a float32 weight: (x - zero point) *
// scale per tensor or per `axis`, its elements computed when the graph's weights were read (else
// only its kind and type change). The node stays in the graph; the partitioner gives a node whose
// outputs are all weights no kernel. A scale or zero point of neither 1 nor the axis's values
// leaves the node as it is.
void fold_weight_dequantize(ModelGraph &g);

}  // namespace opgen::onnx_import

#endif
