// Training a small GPT-2 on the induction task or on text: seeded batches, the gradient computed on
// `threads` shards of each batch and summed in shard order (the same bytes for the same seed and
// thread count), AdamW with warm-up and decay, and at every interval the figures that show an
// induction head forming: held-out loss, in-context accuracy on repeated segments, and every
// head's previous-token and induction scores; the phase change found in them.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "lm/adamw.h"
#include "lm/backward.h"
#include "lm/forward.h"
#include "lm/head_trace.h"
#include "lm/llama_train.h"
#include "lm/train_data.h"
#include "train/run_control.h"

namespace attn::lm {

struct TrainOptions {
  // The model: GPT-2's architecture (learned positions, LayerNorm, GELU MLP, one K/V head per
  // query head) or today's (kLlama: RoPE, RMSNorm, SwiGLU, n_kv_head K/V heads shared by the
  // query heads, the output tied to the embedding; lm/llama_train.h), or kQwen2: the same with
  // biases on q, k and v.
  LmArch arch = LmArch::kGpt2;
  int n_layer = 2, n_head = 4, n_embd = 64;
  int n_kv_head = 0;            // the Llama architecture's K/V heads (0: n_head, no sharing)
  double rope_theta = 10000;    // the Llama architecture's RoPE base
  int context = 64;             // T: tokens per training sequence (n_positions of the model)
  bool attention_only = false;  // no MLP blocks (written with zero MLP weights: GPT-2's form)
  float init_std = 0.02f;       // GPT-2's initialisation
  // The optimisation.
  int batch = 32;
  long steps = 2000, warmup = 100;
  double lr = 1e-3, min_lr_ratio = 0.1, weight_decay = 0.1, clip = 1.0;
  // Attention shaping: for the first shape_steps steps the loss gains shape_previous times the
  // mean −ln w(t, t−1) of layer 0's head 0 over the batch's positions t ≥ 1, pulling that head
  // toward the previous token (lm/backward.h's PreviousTokenShaping); 0: none. The reported losses
  // stay the next-token losses.
  double shape_previous = 0;
  long shape_steps = 0;
  LrSchedule schedule = LrSchedule::kCosine;
  uint64_t seed = 1;
  int threads = 1;
  // The figures.
  int eval_every = 100;        // steps between figures (and checkpoints)
  int heldout_sequences = 32;  // the held-out batch
  int probe_sequences = 8;     // repeat probes for in-context accuracy and head scores
};

// An error naming the field (as TrainOptions spells it: "n_embd: …") when the options cannot
// train, else "".
std::string check_train_options(const TrainOptions& o);

// The config of the model the options train on a vocabulary of `vocab_size` tokens. The Llama
// architecture's: head size n_embd/n_head, RMSNorm eps 1e-5, tied output, and
// a SwiGLU width of 8/3·n_embd rounded up to a multiple of 8 (as Llama sizes it, so the MLP has
// about as many weights as GPT-2's 4·n_embd GELU MLP).
Config training_config(const TrainOptions& o, int vocab_size);

// The most memory building and training a model may take (docs/robustness.md): 4 GiB. Flags in
// their documented ranges can ask for far more (48 layers × 64 heads, n_embd 4096, context and
// batch 4096: petabytes); such a run is refused before anything is read or created.
constexpr double kMaxTrainBytes = 4294967296.0;
// The parameters of a model of config c (every tensor of ParamLayout), in double: no overflow.
double parameter_count(const Config& c);
// What training with `o` on a vocabulary of at most `vocab_size` tokens takes: the parameters,
// their gradient, AdamW's two moments and a gradient per thread, the batch's activations and their
// gradients, and the held-out evaluation's activations.
double training_bytes(const TrainOptions& o, int vocab_size);
// "" when training_bytes(o, vocab_size) ≤ kMaxTrainBytes, else an error with the bytes and the
// limit.
std::string check_train_memory(const TrainOptions& o, int vocab_size);

// The figures at one step.
struct EvalPoint {
  long step = 0;
  double train_loss = 0;    // mean batch loss since the previous point (the held-out loss at 0)
  double heldout_loss = 0;  // mean next-token loss on the held-out batch
  double icl_accuracy = 0;  // next-token accuracy on the second copy of the repeat probes
  double icl_loss = 0;      // the loss there
  double lr = 0;
  double seconds = 0;                         // since training started
  std::vector<HeadScores> heads;              // averaged over the repeat probes, [l · NH + h]
  int best_induction = 0, best_previous = 0;  // the heads with the highest score
  // The figures on a separate held-out text (lm train --eval-corpus; lm/corpus_eval.h), when
  // eval_tokens > 0: mean loss (nats per token), top-1 and top-5 next-token accuracy.
  long eval_tokens = 0;
  double eval_loss = 0, eval_top1 = 0, eval_top5 = 0;
};

// The phase change: where in-context accuracy jumps. Found once it has risen by at least 0.3 from
// its level before the rise (the median of the points up to the highest so far that are under
// halfway from the lowest) to the highest: from the last point under 10% of the way up before the
// first point 90% of the way up, to that point.
struct PhaseChange {
  bool found = false;
  long start = 0, end = 0;  // steps
  double from = 0, to = 0;  // in-context accuracy before and after
};
PhaseChange detect_phase_change(const std::vector<EvalPoint>& history);

// training.json, written beside a trained model: the command that trained it, how far it got, the
// figures at every interval (with the best heads) and the phase change.
std::string training_json(const std::string& command, const Config& c, long steps_done, long steps,
                          const std::vector<EvalPoint>& history);

// A model for the options: the data set's tokenizer, GPT-2's initialisation from the seed (the
// Llama architecture's matrices as GPT-2's, its RMSNorm weights at 1); with attention_only, every
// MLP weight zero (and Model::mlp false). A Llama model's inference weights (Model::llama) are
// made from its training buffer (Model::params) here and whenever train_lm reports or returns.
Model new_training_model(const TrainOptions& o, const TrainSet& set);

// The held-out batch and the repeat probes, made once.
struct EvalData {
  TokenBatch heldout, probes;
};
EvalData make_eval_data(const TrainSet& set, const TrainOptions& o);

// The figures of `model` (step, lr, train_loss and seconds are left for the caller). With
// `probe_acts`, the activations of the repeat probes are kept there (the live view draws them).
EvalPoint evaluate(const Model& model, const EvalData& data, int threads,
                   Activations* probe_acts = nullptr);

struct TrainCallbacks {
  // After every step: steps done (1-based), the batch's mean loss, the learning rate used.
  std::function<void(long, double, double)> on_step;
  // At step 0 and every eval_every steps and at the last: the figures, the model as it is, and
  // the activations of the repeat probes.
  std::function<void(const EvalPoint&, const Model&, const Activations&)> on_eval;
  // Checked between steps: when set, training stops (the model keeps the last complete step).
  // A flag, so a signal handler can set it (the command line's Ctrl+C).
  const std::atomic<bool>* stop = nullptr;
  // Checked between steps: a stop ends training as `stop` does; while paused, training waits on
  // it (the app's pause button).
  train::RunControl* control = nullptr;
};

// Trains `model` (from new_training_model) in place; returns the number of steps done (fewer than
// o.steps when stopped).
long train_lm(Model& model, const TrainSet& set, const TrainOptions& o, const TrainCallbacks& cb);

// What a run needs, besides the model's weights, to continue after a stop exactly as if it had not
// stopped (lm/train_checkpoint.h writes it to a file): the steps done, AdamW's moments, the
// batches' generator (the data position), the batch losses since the last figures and the
// training time so far.
struct TrainState {
  long step = 0;
  AdamW opt;
  Rng rng{0};
  double interval_loss = 0;
  long interval_steps = 0;
  double seconds = 0;
};

// train_lm from a state: a fresh one (step 0) starts the run, reporting step 0; one read from a
// checkpoint (with the model's weights as they were then) continues it to o.steps, giving the
// same weights as a run that never stopped. `state` is kept current: during on_eval and on
// return it describes the run after its last complete step.
long train_lm(Model& model, const TrainSet& set, const TrainOptions& o, const TrainCallbacks& cb,
              TrainState& state);

// What each shard of a batch keeps from one step to the next.
struct GradientWorkspace {
  struct Shard {
    Activations acts;
    GradScratch<float> scratch;
    LlamaScratch<float> llama_scratch;
    Parameters grad;
    double loss = 0;
  };
  std::vector<Shard> shards;
};

// The gradient of one batch's mean loss (over its targets ≥ 0), computed on `threads` shards of
// rows and summed in shard order; returns the mean loss. `grad` is allocated like the model's
// parameters. With shape_previous > 0 the gradient also has that weight times the mean
// −ln w(t, t−1) of layer 0's head 0 over the batch's positions t ≥ 1 (not in the returned loss).
double batch_gradient(const Model& model, const TokenBatch& batch, int threads, Parameters& grad,
                      GradientWorkspace& work, double shape_previous = 0);

}  // namespace attn::lm
