// Row-major matrix types shared by the whole engine, so a matrix, a heatmap row and a .npy agree.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <vector>

namespace attn {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVector = Eigen::Matrix<float, 1, Eigen::Dynamic>;
// One matrix per head: index h is head h. A 2-D input is a stack of one.
using HeadStack = std::vector<Matrix>;

}  // namespace attn
