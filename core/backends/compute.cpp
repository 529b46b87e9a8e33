// A problem or a scenario run on a backend: the engine starts the trace, the backend appends the
// stages, the engine labels them; a scenario adds its tokens and projection steps.
#include "backends/compute.h"

#include <algorithm>
#include <cassert>

#include "attention/engine.h"
#include "attention/row_slice.h"

namespace attn {

void Backend::run_weights(const AttentionProblem& p, HeadStack& weights, HeadStack& output) {
  AttentionTrace t;
  run_stages(p, t);
  weights = std::move(t.find("weights")->heads);
  output = std::move(t.find("output")->heads);
}

AttentionTrace compute_trace(const AttentionProblem& p, Backend& backend) {
  AttentionTrace t = begin_trace(p);
  // The additive score has only the CPU's staged path (OpenCL's kernels compute Q·Kᵀ): it runs
  // there, and the trace's backend says so.
  std::unique_ptr<Backend> cpu;
  Backend* run = &backend;
  if (p.options.additive && !backend.supports(p)) {
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
  AttentionTrace t = begin_trace(p);
  const AttentionProblem slice = slice_query_rows(p, first, last);
  std::unique_ptr<Backend> cpu;
  Backend* run = &backend;
  if (!backend.supports(slice)) {
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
      if (!backend.supports(slice)) {
        if (!cpu) cpu = make_cpu_backend();
        run = cpu.get();
      }
      run->run_weights(slice, weights, output);
      sink(h, a, weights[0], output[0]);
    }
  }
}

AttentionTrace compute_scenario_trace_rows(const Scenario& s, Backend& backend, int first,
                                           int last) {
  assert(validate_scenario(s).empty());
  AttentionTrace t = compute_trace_rows(to_problem(s), backend, first, last);
  add_scenario_steps(s, t);
  return t;
}

AttentionTrace compute_scenario_trace(const Scenario& s, Backend& backend) {
  assert(validate_scenario(s).empty());
  AttentionTrace t = compute_trace(to_problem(s), backend);
  add_scenario_steps(s, t);
  return t;
}

}  // namespace attn
