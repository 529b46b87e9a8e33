// Training loop, batched gradients on threads, evaluation and translation (see trainer.h).
#include "seq2seq/trainer.h"

#include <algorithm>
#include <chrono>

#include "attention/parallel.h"
#include "seq2seq/adam.h"

namespace attn::s2s {

namespace {

constexpr int kMaxInputLength = 200;

Batch make_batch(const Model& m, const std::vector<DateExample>& data,
                 const std::vector<int>& order, size_t from, size_t to) {
  Batch b;
  std::string unused;
  for (size_t i = from; i < to; ++i) {
    const DateExample& ex = data[static_cast<size_t>(order[i])];
    std::vector<int> src, tgt;
    encode(m.in_vocab, ex.input, src, unused);
    encode(m.out_vocab, ex.target, tgt, unused);
    tgt.push_back(kEos);
    b.src.push_back(std::move(src));
    b.tgt.push_back(std::move(tgt));
  }
  return b;
}

Batch slice(const Batch& b, int lo, int hi) {
  Batch s;
  s.src.assign(b.src.begin() + lo, b.src.begin() + hi);
  if (!b.tgt.empty()) s.tgt.assign(b.tgt.begin() + lo, b.tgt.begin() + hi);
  return s;
}

}  // namespace

std::vector<DateExample> heldout_dates(int count, int min_length, int max_length) {
  DateSetOptions o;
  o.count = count;
  o.seed = kHeldOutSeed;
  o.split = Split::kHeldOut;
  o.min_length = min_length;
  o.max_length = max_length;
  std::vector<DateExample> out;
  std::string error;
  generate_dates(o, out, error);
  return out;
}

double batch_gradient(const Model& model, const Batch& batch, int threads, Params<float>& grad) {
  const int rows = static_cast<int>(batch.src.size());
  const double tokens = static_cast<double>(rows) * static_cast<double>(batch.tgt[0].size());
  const int n = shard_count(rows, threads);
  std::vector<Params<float>> grads(static_cast<size_t>(n));
  std::vector<double> losses(static_cast<size_t>(n), 0.0);
  run_shards(rows, n, [&](int k, int lo, int hi) {
    ForwardCache<float> fc;
    forward(model.config, model.params, slice(batch, lo, hi), fc);
    grads[k] = model.params.zeros_like();
    backward(model.config, model.params, fc, static_cast<float>(1.0 / tokens), grads[k]);
    losses[k] = fc.loss_sum;
  });
  // Summed in shard order, so the result depends only on the thread count, not on timing.
  grad = std::move(grads[0]);
  double loss = losses[0];
  for (int k = 1; k < n; ++k) {
    std::vector<Mat<float>*> dst;
    grad.visit([&dst](const char*, Mat<float>& m) { dst.push_back(&m); });
    size_t i = 0;
    grads[k].visit([&](const char*, const Mat<float>& m) { *dst[i++] += m; });
    loss += losses[k];
  }
  return loss / tokens;
}

std::vector<std::string> predict(const Model& model, const std::vector<std::string>& inputs,
                                 int threads) {
  std::vector<std::string> out(inputs.size());
  constexpr size_t kChunk = 256;
  for (size_t from = 0; from < inputs.size(); from += kChunk) {
    const size_t to = std::min(inputs.size(), from + kChunk);
    // Only inputs the alphabet can encode are decoded; any other stays "" (never a match).
    Batch b;
    std::vector<size_t> index;  // batch row -> input
    std::string unused;
    for (size_t i = from; i < to; ++i) {
      std::vector<int> ids;
      if (inputs[i].empty() || !encode(model.in_vocab, inputs[i], ids, unused)) continue;
      b.src.push_back(std::move(ids));
      index.push_back(i);
    }
    run_shards(static_cast<int>(b.src.size()), threads, [&](int, int lo, int hi) {
      if (lo == hi) return;
      ForwardCache<float> fc;
      forward(model.config, model.params, slice(b, lo, hi), fc, 12);
      const auto ids = decoded(fc);
      for (int r = lo; r < hi; ++r) {
        std::string s;
        for (int id : ids[static_cast<size_t>(r - lo)]) s += model.out_vocab.label(id);
        out[index[static_cast<size_t>(r)]] = s;
      }
    });
  }
  return out;
}

std::vector<LengthBucket> accuracy_by_length(const Model& model,
                                             const std::vector<DateExample>& data, int threads) {
  std::vector<LengthBucket> rows = {{"6-10", 6, 10},   {"11-20", 11, 20},   {"21-30", 21, 30},
                                    {"31-40", 31, 40}, {"41-50", 41, 50},   {"51-60", 51, 60},
                                    {"61-70", 61, 70}, {"71-200", 71, 200}, {"all", 0, 1 << 30}};
  std::vector<std::string> inputs;
  for (const auto& ex : data) inputs.push_back(ex.input);
  const auto got = predict(model, inputs, threads);
  for (size_t i = 0; i < data.size(); ++i) {
    const int len = static_cast<int>(data[i].input.size());
    const bool ok = got[i] == data[i].target;
    for (auto& r : rows)
      if (len >= r.lo && len <= r.hi) {
        ++r.count;
        r.correct += ok ? 1 : 0;
      }
  }
  // Drop empty buckets except "all".
  rows.erase(std::remove_if(rows.begin(), rows.end() - 1,
                            [](const LengthBucket& r) { return r.count == 0; }),
             rows.end() - 1);
  return rows;
}

bool check_date_alphabets(const Model& model, std::string& error) {
  const struct {
    const Vocab& has;
    Vocab needs;
    const char* which;
  } pairs[] = {{model.in_vocab, default_input_vocab(), "input"},
               {model.out_vocab, default_output_vocab(), "output"}};
  for (const auto& p : pairs) {
    std::string why;
    if (!check_alphabet(p.has, why)) {
      error = std::string("its ") + p.which + " alphabet is unusable: " + why;
      return false;
    }
    for (char c : p.needs.chars)
      if (p.has.id(c) < 0) {
        error = std::string("its ") + p.which + " alphabet lacks '" + char_text(c) +
                "', which the dates of the task use";
        return false;
      }
  }
  return true;
}

bool translate(const Model& model, const std::string& input, ForwardCache<float>& trace,
               std::string& output, std::string& error, int max_steps) {
  if (input.empty()) {
    error = "the input is empty";
    return false;
  }
  if (input.size() > kMaxInputLength) {
    error = "the input is " + std::to_string(input.size()) + " characters long; at most " +
            std::to_string(kMaxInputLength) + " are accepted";
    return false;
  }
  Batch b;
  b.src.emplace_back();
  if (!encode(model.in_vocab, input, b.src[0], error)) return false;
  forward(model.config, model.params, b, trace, max_steps);
  output.clear();
  const auto ids = decoded(trace);  // kept alive: the loop below reads its first row
  for (int id : ids[0]) output += model.out_vocab.label(id);
  return true;
}

int train_model(Model& model, const TrainOptions& o, const TrainCallbacks& cb, std::string& error) {
  DateSetOptions d;
  d.count = o.train_size;
  d.seed = o.seed;
  d.split = Split::kTrain;
  d.min_length = o.min_length;
  d.max_length = o.max_length;
  std::vector<DateExample> train;
  if (!generate_dates(d, train, error)) return -1;
  const std::vector<DateExample> heldout = heldout_dates(o.heldout_size);
  Adam adam;
  adam.lr = o.lr;
  Rng shuffle(o.seed ^ 0x5EED5EEDull);
  std::vector<int> order(train.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  const int batches = static_cast<int>((train.size() + static_cast<size_t>(o.batch) - 1) /
                                       static_cast<size_t>(o.batch));
  for (int epoch = 1; epoch <= o.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    // Fisher–Yates with our own generator: the same order on every platform.
    for (size_t i = order.size(); i > 1; --i)
      std::swap(order[i - 1], order[static_cast<size_t>(shuffle.below(static_cast<int>(i)))]);
    const Params<float> epoch_start = model.params;
    const Adam adam_start = adam;
    double loss_sum = 0;
    for (int k = 0; k < batches; ++k) {
      if ((cb.control && !cb.control->wait_while_paused()) || (cb.stop && cb.stop->load())) {
        model.params = epoch_start;
        adam = adam_start;
        return epoch - 1;
      }
      const size_t from = static_cast<size_t>(k) * static_cast<size_t>(o.batch);
      const size_t to = std::min(train.size(), from + static_cast<size_t>(o.batch));
      const Batch b = make_batch(model, train, order, from, to);
      Params<float> grad;
      const double loss = batch_gradient(model, b, o.threads, grad);
      adam.step(model.params, grad);
      loss_sum += loss;
      if (cb.on_batch) cb.on_batch(epoch, k, batches, loss, model);
    }
    EpochStats st;
    st.epoch = epoch;
    st.loss = loss_sum / batches;
    st.heldout_accuracy = accuracy_by_length(model, heldout, o.threads).back().accuracy();
    st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (cb.on_epoch) cb.on_epoch(st, model);
  }
  return o.epochs;
}

}  // namespace attn::s2s
