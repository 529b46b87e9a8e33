// A problem or a scenario run on a backend: the engine starts the trace, the backend appends the
// stages, the engine labels them; a scenario adds its tokens and projection steps.
#include "backends/compute.h"

#include <algorithm>

#include "attention/engine.h"
#include "attention/row_slice.h"

namespace attn {

void Backend::run_weights(const AttentionProblem& p, HeadStack& weights, HeadStack& output) {
  AttentionTrace t;
  run_stages(p, t);
  weights = std::move(t.find(StageId::kWeights)->heads);
  output = std::move(t.find(StageId::kOutput)->heads);
}

AttentionTrace compute_trace(const AttentionProblem& p, Backend& backend) {
  AttentionTrace t = begin_trace(p);
  // The variants beyond masks and the additive score run on the staged CPU engine only (OpenCL's
  // kernels compute plain Q·Kᵀ attention); the trace names the backend used.
  std::unique_ptr<Backend> cpu;
  Backend* run = &backend;
  if ((p.options.variants.any() || p.options.additive) && !backend.supports_trace(p)) {
    cpu = make_cpu_backend();
    run = cpu.get();
  }
  t.backend = run->name();
  run->run_stages(p, t);
  label_stages(p, t);
  return t;
}

AttentionTrace compute_trace_rows(const AttentionProblem& p, Backend& backend, int first,
                                  int last) {
  // A variant's rows depend on other rows (the convolution) and heads (mixing): the whole trace,
  // then its rows [first, last) and the c_q − 1 rows before them that a kernel reads.
  if (p.options.variants.any()) {
    std::unique_ptr<Backend> cpu = make_cpu_backend();
    AttentionTrace whole = compute_trace(p, *cpu);
    const HeadStack& kernels = p.options.variants.multi_token.kq_conv;
    const int c_q = kernels.empty() ? 1 : static_cast<int>(kernels[0].rows());
    const int lo = std::max(0, first - (c_q - 1)), rows = last - lo;
    for (TraceStep& s : whole.steps) {
      // The inputs and Linformer's projected keys and values hold every key, not query rows.
      const StageKind kind = stage_kind(s.id);
      if (kind == StageKind::kInput || kind == StageKind::kKeySide) continue;
      for (Matrix& m : s.heads) m = Matrix(m.middleRows(lo, rows));
    }
    for (ReasonMatrix& r : whole.hidden) r = ReasonMatrix(r.middleRows(lo, rows));
    for (std::vector<bool>& e : whole.empty_row)
      e = std::vector<bool>(e.begin() + lo, e.begin() + last);
    whole.first_row = lo;
    return whole;
  }
  AttentionTrace t = begin_trace(p);
  const AttentionProblem slice = slice_query_rows(p, first, last);
  std::unique_ptr<Backend> cpu;
  Backend* run = &backend;
  if (!backend.supports_trace(slice)) {
    cpu = make_cpu_backend();
    run = cpu.get();
  }
  t.backend = run->name();
  AttentionTrace stages;
  run->run_stages(slice, stages);
  for (TraceStep& st : stages.steps) t.steps.push_back(std::move(st));
  t.hidden = std::move(stages.hidden);
  t.empty_row = std::move(stages.empty_row);
  t.first_row = first;
  label_stages(p, t);
  return t;
}

void compute_weights_by_rows(const AttentionProblem& p, Backend& backend, int block_rows,
                             const RowBlockSink& sink) {
  const int H = p.input.num_heads(), n_q = p.input.n_q();
  if (p.options.variants.any()) {
    // Whole, on the CPU: a variant's rows and heads depend on each other.
    HeadStack weights, output;
    make_cpu_backend()->run_weights(p, weights, output);
    for (int h = 0; h < H; ++h)
      sink(h, 0, weights[static_cast<size_t>(h)], output[static_cast<size_t>(h)]);
    return;
  }
  std::unique_ptr<Backend> cpu;
  // Kept across blocks: a backend that fills them in place (the CPU) reuses their memory.
  HeadStack weights, output;
  for (int h = 0; h < H; ++h) {
    // Head h as a problem of its own, so its rows come out contiguous, as a (H, n_q, n_k) file
    // stores them.
    const AttentionProblem one = select_head(p, h);
    for (int a = 0; a < n_q; a += block_rows) {
      const int b = std::min(n_q, a + block_rows);
      const AttentionProblem slice = slice_query_rows(one, a, b);
      Backend* run = &backend;
      if (!backend.supports_outputs(slice)) {
        if (!cpu) cpu = make_cpu_backend();
        run = cpu.get();
      }
      run->run_weights(slice, weights, output);
      sink(h, a, weights[0], output[0]);
    }
  }
}

namespace {

// A scenario the engine cannot run (a non-finite value, tensors that disagree) is the caller's
// error, reported, never an abort: a scenario can come from a file, the app's editor or a model's
// forward pass.
void require_valid(const Scenario& s) {
  if (std::string e = validate_scenario(s); !e.empty()) throw InvalidScenario(e);
}

}  // namespace

AttentionTrace compute_scenario_trace_rows(const Scenario& s, Backend& backend, int first,
                                           int last) {
  require_valid(s);
  AttentionTrace t = compute_trace_rows(to_problem(s), backend, first, last);
  add_scenario_steps(s, t);
  return t;
}

AttentionTrace compute_scenario_trace(const Scenario& s, Backend& backend) {
  require_valid(s);
  AttentionTrace t = compute_trace(to_problem(s), backend);
  add_scenario_steps(s, t);
  return t;
}

}  // namespace attn
