// The training loop, its figures and the phase change (see trainer.h).
#include "lm/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "attention/parallel.h"

namespace attn::lm {
namespace {

std::vector<int> rows_of(const std::vector<int>& v, int T, int lo, int hi) {
  return std::vector<int>(v.begin() + static_cast<long>(lo) * T,
                          v.begin() + static_cast<long>(hi) * T);
}

ForwardOptions training_forward(const Model& m) {
  ForwardOptions o;
  o.threads = 1;  // the shards are the parallelism
  o.mlp = m.mlp;
  return o;
}

}  // namespace

std::string check_train_options(const TrainOptions& o) {
  if (o.arch != LmArch::kGpt2 && o.arch != LmArch::kLlama && o.arch != LmArch::kQwen2)
    return "arch: expected GPT-2's, Llama's or Qwen2's architecture";
  if (o.n_layer < 1) return "n_layer: at least 1";
  if (o.n_head < 1) return "n_head: at least 1";
  if (o.n_embd < 1 || o.n_embd % o.n_head != 0)
    return "n_embd: " + std::to_string(o.n_embd) + " is not a positive multiple of n_head " +
           std::to_string(o.n_head);
  if (o.arch == LmArch::kGpt2 && o.n_kv_head != 0 && o.n_kv_head != o.n_head)
    return "n_kv_head: GPT-2's architecture has one K/V head per query head (share them with "
           "the Llama architecture)";
  if (o.arch != LmArch::kGpt2) {
    if (o.n_kv_head < 0 || (o.n_kv_head > 0 && o.n_head % o.n_kv_head != 0))
      return "n_kv_head: " + std::to_string(o.n_kv_head) + " does not divide n_head " +
             std::to_string(o.n_head);
    if (!(o.rope_theta > 1 && o.rope_theta <= 1e9))
      return "rope_theta: expected a number in (1, 1e9]";
    if ((o.n_embd / o.n_head) % 2 != 0)
      return "n_embd: RoPE rotates pairs of dimensions, so the head size n_embd/n_head (" +
             std::to_string(o.n_embd / o.n_head) + ") must be even";
  }
  if (o.context < 8) return "context: at least 8 tokens";
  if (o.batch < 1) return "batch: at least 1";
  if (o.steps < 1) return "steps: at least 1";
  if (o.warmup < 0) return "warmup: not negative";
  // Written so that NaN fails each test (every comparison with NaN is false).
  if (!(o.lr > 0 && o.lr <= 1)) return "lr: expected a number in (0, 1]";
  if (!(o.min_lr_ratio >= 0 && o.min_lr_ratio <= 1))
    return "min_lr_ratio: expected a ratio in [0, 1]";
  if (!(o.weight_decay >= 0 && o.weight_decay <= 1)) return "weight_decay: expected [0, 1]";
  if (!(o.init_std > 0 && o.init_std <= 1)) return "init_std: expected a number in (0, 1]";
  if (!(o.clip >= 0) || !std::isfinite(o.clip)) return "clip: expected a finite number >= 0";
  if (o.threads < 1) return "threads: at least 1";
  if (o.eval_every < 1) return "eval_every: at least 1";
  if (!(o.shape_previous >= 0 && o.shape_previous <= 100))
    return "shape_previous: expected a weight in [0, 100]";
  if (o.shape_steps < 0) return "shape_steps: not negative";
  if ((o.shape_previous > 0) != (o.shape_steps > 0))
    return o.shape_previous > 0
               ? "shape_steps: say for how many steps shape_previous applies"
               : "shape_previous: give the weight of the shaping shape_steps asks for";
  return "";
}

double parameter_count(const Config& c) {
  const double L = c.n_layer, C = c.n_embd, F = c.mlp_size();
  if (c.llama_family()) {
    const double V = c.vocab_size, Q = c.q_dim(), KV = c.kv_dim();
    return V * C * (c.tied ? 1 : 2) + C +
           L * (2 * C + C * Q + 2 * C * KV + Q * C + (c.qkv_bias ? Q + 2 * KV : 0) + 3 * C * F);
  }
  return static_cast<double>(c.vocab_size) * C + static_cast<double>(c.n_positions) * C +
         L * (2 * C + 3 * C * C + 3 * C + C * C + C + 2 * C + C * F + F + F * C + C) + 2 * C;
}

Config training_config(const TrainOptions& o, int vocab_size) {
  Config c;
  c.n_layer = o.n_layer;
  c.n_head = o.n_head;
  c.n_embd = o.n_embd;
  c.n_positions = o.context;
  c.vocab_size = vocab_size;
  if (o.arch != LmArch::kGpt2) {
    c.arch = o.arch;
    c.qkv_bias = o.arch == LmArch::kQwen2;
    c.n_kv_head = o.n_kv_head > 0 ? o.n_kv_head : o.n_head;
    c.head_dim = o.n_embd / o.n_head;
    c.n_inner = (8 * o.n_embd / 3 + 7) / 8 * 8;
    c.rope_theta = o.rope_theta;
    c.layer_norm_epsilon = 1e-5;
    c.tied = true;
  }
  return c;
}

double training_bytes(const TrainOptions& o, int vocab_size) {
  const Config c = training_config(o, vocab_size);
  ForwardOptions f;
  f.mlp = !o.attention_only;
  const double params = parameter_count(c) * 4.0 * (4.0 + o.threads);
  // The backward pass's scratch is about as large as the activations it differentiates.
  const double batch = 2.0 * forward_bytes(c, o.batch, o.context, f);
  const double eval = forward_bytes(c, o.heldout_sequences + o.probe_sequences, o.context, f);
  return params + batch + eval;
}

std::string check_train_memory(const TrainOptions& o, int vocab_size) {
  const double bytes = training_bytes(o, vocab_size);
  if (bytes <= kMaxTrainBytes) return "";
  const Config c = training_config(o, vocab_size);
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "n_layer %d, n_head %d, n_embd %d, context %d, batch %d: training would need "
                "%.1f GB (%.0f bytes: %.0f parameters, the batch's activations and their "
                "gradients); at most %.1f GB (%.0f bytes) are allowed (docs/robustness.md)",
                o.n_layer, o.n_head, o.n_embd, o.context, o.batch, bytes / 1e9, bytes,
                parameter_count(c), kMaxTrainBytes / 1e9, kMaxTrainBytes);
  return buf;
}

PhaseChange detect_phase_change(const std::vector<EvalPoint>& h) {
  PhaseChange p;
  if (h.size() < 2) return p;
  size_t hi = 0;
  for (size_t i = 0; i < h.size(); ++i)
    if (h[i].icl_accuracy > h[hi].icl_accuracy) hi = i;
  // The rise that counts is the one to the highest point. It starts from the level before it:
  // the median of the points up to there that are less than halfway up from the lowest — chance
  // level, whose noise would make the lowest point or a threshold near it a poor start.
  double low = h[0].icl_accuracy;
  for (size_t i = 0; i <= hi; ++i) low = std::min(low, h[i].icl_accuracy);
  const double b = h[hi].icl_accuracy;
  std::vector<double> before;
  for (size_t i = 0; i <= hi; ++i)
    if (h[i].icl_accuracy < (low + b) / 2) before.push_back(h[i].icl_accuracy);
  if (before.empty()) return p;
  std::nth_element(before.begin(), before.begin() + before.size() / 2, before.end());
  const double a = before[before.size() / 2];
  if (b - a < 0.3) return p;
  p.found = true;
  p.from = a;
  p.to = b;
  // The end: the first point 90% of the way up. The start: the last point before it still under
  // 10% of the way (a noisy point past 10% long before the rise does not pull the start back).
  size_t end = hi;
  for (size_t i = 0; i <= hi; ++i)
    if (h[i].icl_accuracy >= a + 0.9 * (b - a)) {
      end = i;
      break;
    }
  size_t start = 0;
  for (size_t i = end; i > 0; --i)
    if (h[i - 1].icl_accuracy < a + 0.1 * (b - a)) {
      start = i - 1;
      break;
    }
  p.start = h[start].step;
  p.end = h[end].step;
  return p;
}

std::string training_json(const std::string& command, const Config& c, long steps_done, long steps,
                          const std::vector<EvalPoint>& history) {
  nlohmann::ordered_json j;
  j["command"] = command;
  j["steps_done"] = steps_done;
  j["steps"] = steps;
  auto head = [&c](int i, double score) {
    return nlohmann::ordered_json{
        {"layer", i / c.n_head}, {"head", i % c.n_head}, {"score", score}};
  };
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const EvalPoint& e : history) {
    nlohmann::ordered_json row = {
        {"step", e.step},
        {"train_loss", e.train_loss},
        {"heldout_loss", e.heldout_loss},
        {"in_context_accuracy", e.icl_accuracy},
        {"in_context_loss", e.icl_loss},
        {"lr", e.lr},
        {"seconds", e.seconds},
        {"best_induction_head",
         head(e.best_induction, e.heads[static_cast<size_t>(e.best_induction)].induction)},
        {"best_previous_token_head",
         head(e.best_previous, e.heads[static_cast<size_t>(e.best_previous)].previous)}};
    if (e.eval_tokens > 0)
      row["eval_corpus"] = {{"tokens", e.eval_tokens},
                            {"loss", e.eval_loss},
                            {"perplexity", std::exp(e.eval_loss)},
                            {"top1", e.eval_top1},
                            {"top5", e.eval_top5}};
    rows.push_back(row);
  }
  j["history"] = rows;
  const PhaseChange p = detect_phase_change(history);
  j["phase_change"] = p.found ? nlohmann::ordered_json{{"start_step", p.start},
                                                       {"end_step", p.end},
                                                       {"in_context_accuracy_before", p.from},
                                                       {"in_context_accuracy_after", p.to}}
                              : nlohmann::ordered_json();
  return j.dump(2) + "\n";
}

Model new_training_model(const TrainOptions& o, const TrainSet& set) {
  Model m;
  m.tokenizer = set.tokenizer;
  init_random(m, training_config(o, set.tokenizer.size()), o.seed, o.init_std);
  if (o.attention_only) {
    for (Param t : {kFcW, kFcB, kFcProjW, kFcProjB})
      std::fill(m.params.ptr(t), m.params.ptr(t) + m.params.count[t], 0.0f);
    m.mlp = false;
  }
  if (m.config.llama_family()) llama_weights_from_params(m);
  m.name = "trained";
  return m;
}

EvalData make_eval_data(const TrainSet& set, const TrainOptions& o) {
  return {heldout_batch(set, o.heldout_sequences, o.context),
          repeat_probes(set, o.probe_sequences, o.context)};
}

double batch_gradient(const Model& model, const TokenBatch& batch, int threads, Parameters& grad,
                      GradientWorkspace& work, double shape_previous) {
  const int n = shard_count(batch.B, threads);
  work.shards.resize(static_cast<size_t>(n));
  const double counted = static_cast<double>(
      std::count_if(batch.targets.begin(), batch.targets.end(), [](int t) { return t >= 0; }));
  const double scale = counted > 0 ? 1.0 / counted : 0.0;
  const ForwardOptions fo = training_forward(model);
  PreviousTokenShaping shaping;  // layer 0, head 0; a mean over the whole batch, not the shard
  if (shape_previous > 0 && batch.T > 1)
    shaping.scale = shape_previous / (static_cast<double>(batch.B) * (batch.T - 1));
  run_shards(batch.B, n, [&](int k, int lo, int hi) {
    GradientWorkspace::Shard& s = work.shards[static_cast<size_t>(k)];
    if (s.grad.total() != model.params.total()) s.grad.allocate(model.config);
    std::fill(s.grad.memory.begin(), s.grad.memory.end(), 0.0f);
    const std::vector<int> tokens = rows_of(batch.tokens, batch.T, lo, hi);
    const std::vector<int> targets = rows_of(batch.targets, batch.T, lo, hi);
    if (model.config.llama_family()) {
      llama_train_forward(model.params, tokens, hi - lo, batch.T, s.acts, s.llama_scratch, fo);
      s.loss = llama_backward(model.params, s.acts, targets, scale, s.grad, s.llama_scratch, fo,
                              nullptr, shaping);
    } else {
      gpt_forward(model.params, tokens, hi - lo, batch.T, s.acts, fo);
      s.loss = gpt_backward(model.params, s.acts, targets, scale, s.grad, s.scratch, fo, nullptr,
                            shaping);
    }
  });
  // Summed in shard order, so the result depends on the thread count only, never on timing.
  if (grad.total() != model.params.total()) grad.allocate(model.config);
  grad.memory = work.shards[0].grad.memory;
  double loss = work.shards[0].loss;
  for (size_t k = 1; k < work.shards.size(); ++k) {
    const AlignedVector<float>& g = work.shards[k].grad.memory;
    for (size_t i = 0; i < g.size(); ++i) grad.memory[i] += g[i];
    loss += work.shards[k].loss;
  }
  return loss * scale;
}

EvalPoint evaluate(const Model& model, const EvalData& data, int threads, Activations* probe_acts) {
  EvalPoint e;
  ForwardOptions fo;
  fo.threads = threads;
  AlignedVector<float> dlogits;
  auto loss_of = [&](const Activations& a, const std::vector<int>& targets) {
    dlogits.resize(a.logits.size());
    const double sum = crossentropy_backward(dlogits.data(), a.logits.data(), targets.data(),
                                             a.B * a.T, model.config.vocab_size, 0.0);
    const auto n = std::count_if(targets.begin(), targets.end(), [](int t) { return t >= 0; });
    return n > 0 ? sum / static_cast<double>(n) : 0.0;
  };
  Activations a;
  gpt_forward(model, data.heldout.tokens, data.heldout.B, data.heldout.T, a, fo);
  e.heldout_loss = loss_of(a, data.heldout.targets);

  Activations local;
  Activations& p = probe_acts ? *probe_acts : local;
  const TokenBatch& pr = data.probes;
  gpt_forward(model, pr.tokens, pr.B, pr.T, p, fo);
  e.icl_loss = loss_of(p, pr.targets);
  const int V = model.config.vocab_size;
  int right = 0, total = 0;
  for (size_t i = 0; i < pr.targets.size(); ++i) {
    if (pr.targets[i] < 0) continue;
    const float* z = p.logits.data() + i * static_cast<size_t>(V);
    right += static_cast<int>(std::max_element(z, z + V) - z) == pr.targets[i] ? 1 : 0;
    ++total;
  }
  e.icl_accuracy = total ? static_cast<double>(right) / total : 0.0;

  const int H = model.config.n_layer * model.config.n_head;
  e.heads.assign(static_cast<size_t>(H), HeadScores{});
  for (auto& s : e.heads) s.induction = 0;
  for (int b = 0; b < pr.B; ++b) {
    const std::vector<HeadScores> s = head_scores(model.config, p, b);
    for (int i = 0; i < H; ++i) {
      HeadScores& d = e.heads[static_cast<size_t>(i)];
      d.previous += s[static_cast<size_t>(i)].previous / pr.B;
      d.first += s[static_cast<size_t>(i)].first / pr.B;
      d.self += s[static_cast<size_t>(i)].self / pr.B;
      d.induction += std::max(0.0, s[static_cast<size_t>(i)].induction) / pr.B;
      d.induction_queries += s[static_cast<size_t>(i)].induction_queries;
    }
  }
  for (int i = 0; i < H; ++i) {
    if (e.heads[static_cast<size_t>(i)].induction >
        e.heads[static_cast<size_t>(e.best_induction)].induction)
      e.best_induction = i;
    if (e.heads[static_cast<size_t>(i)].previous >
        e.heads[static_cast<size_t>(e.best_previous)].previous)
      e.best_previous = i;
  }
  return e;
}

long train_lm(Model& model, const TrainSet& set, const TrainOptions& o, const TrainCallbacks& cb) {
  TrainState state;
  return train_lm(model, set, o, cb, state);
}

long train_lm(Model& model, const TrainSet& set, const TrainOptions& o, const TrainCallbacks& cb,
              TrainState& st) {
  const auto start = std::chrono::steady_clock::now();
  const double before = st.seconds;  // a resumed run's time so far
  auto seconds = [&start, before] {
    return before + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const EvalData data = make_eval_data(set, o);
  Activations probe_acts;
  // A Llama model is evaluated (and saved) through its inference weights, made from the
  // training buffer whenever the model is shown or handed back.
  auto sync = [&model, &st, &seconds] {
    if (model.config.llama_family()) llama_weights_from_params(model);
    st.seconds = seconds();
  };
  auto report = [&](long step, double train_loss, double lr) {
    sync();
    EvalPoint e = evaluate(model, data, o.threads, &probe_acts);
    e.step = step;
    e.train_loss = step == 0 ? e.heldout_loss : train_loss;
    e.lr = lr;
    e.seconds = st.seconds = seconds();  // a checkpoint keeps the time of the figures too
    if (cb.on_eval) cb.on_eval(e, model, probe_acts);
  };
  AdamW& opt = st.opt;
  opt.weight_decay = o.weight_decay;
  opt.clip = o.clip;
  if (!model.mlp)  // the MLP and the layer norm that only feeds it
    for (Param t : {kLn2W, kLn2B, kFcW, kFcB, kFcProjW, kFcProjB}) opt.frozen[t] = true;
  TokenBatch batch;
  Parameters grad;
  GradientWorkspace work;
  if (st.step == 0) {
    // The batches' own generator, separate from the initialisation's.
    st.rng = Rng(o.seed * 0x9E3779B97F4A7C15ull + 1);
    st.interval_loss = 0;
    st.interval_steps = 0;
    report(0, 0, scheduled_lr(0, o.steps, o.warmup, o.lr, o.min_lr_ratio, o.schedule));
  }
  for (long step = st.step; step < o.steps; ++step) {
    if ((cb.control && !cb.control->wait_while_paused()) || (cb.stop && cb.stop->load())) {
      sync();
      return step;
    }
    sample_batch(set, st.rng, o.batch, o.context, batch);
    const double loss = batch_gradient(model, batch, o.threads, grad, work,
                                       step < o.shape_steps ? o.shape_previous : 0.0);
    const double lr = scheduled_lr(step, o.steps, o.warmup, o.lr, o.min_lr_ratio, o.schedule);
    opt.step(model.params, grad, lr);
    st.step = step + 1;
    st.interval_loss += loss;
    ++st.interval_steps;
    if (cb.on_step) cb.on_step(step + 1, loss, lr);
    if ((step + 1) % o.eval_every == 0 || step + 1 == o.steps) {
      const double mean = st.interval_loss / static_cast<double>(st.interval_steps);
      st.interval_loss = 0;  // a checkpoint written during on_eval starts the next interval
      st.interval_steps = 0;
      report(step + 1, mean, lr);
    }
  }
  sync();
  return o.steps;
}

}  // namespace attn::lm
