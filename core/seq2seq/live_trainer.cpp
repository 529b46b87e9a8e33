// Background training with snapshots for the app (see live_trainer.h).
#include "seq2seq/live_trainer.h"

namespace attn::s2s {

LiveTrainer::~LiveTrainer() { cancel(); }

void LiveTrainer::cancel() {
  stop_.store(true);
  if (worker_.joinable()) worker_.join();
}

void LiveTrainer::set_paused(bool paused) {
  pause_.store(paused);
  std::lock_guard<std::mutex> lock(mutex_);
  snap_.paused = paused;
}

LiveSnapshot LiveTrainer::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return snap_;
}

Model LiveTrainer::model() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return model_;
}

void LiveTrainer::redraw(const Model& m) {
  ForwardCache<float> fc;
  std::string out, error;
  if (!translate(m, setup_.example, fc, out, error)) return;
  const int rows = std::min(static_cast<int>(fc.steps.size()), static_cast<int>(out.size()) + 1);
  Mat<float> a = Mat<float>::Zero(rows, fc.src_len);
  if (m.config.score != Score::kNone)
    for (int i = 0; i < rows; ++i) a.row(i) = fc.steps[static_cast<size_t>(i)].alpha.row(0);
  std::lock_guard<std::mutex> lock(mutex_);
  snap_.alignment = std::move(a);
  snap_.output = out;
  ++snap_.alignment_serial;
}

bool LiveTrainer::start(const LiveTrainingSetup& setup, std::string& error) {
  cancel();
  Model m = new_date_model(setup.score, setup.hidden, setup.embed, setup.window, setup.seed);
  std::vector<int> ids;
  if (setup.example.empty() || !encode(m.in_vocab, setup.example, ids, error)) {
    if (setup.example.empty()) error = "the example is empty";
    return false;
  }
  setup_ = setup;
  stop_.store(false);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    snap_ = LiveSnapshot{};
    snap_.running = true;
    snap_.paused = pause_.load();
    model_ = m;
  }
  redraw(m);  // the untrained model's alignment: close to uniform
  worker_ = std::thread([this, m]() mutable {
    TrainCallbacks cb;
    cb.stop = &stop_;
    cb.pause = &pause_;
    cb.on_batch = [this](int epoch, int k, int n, double loss, const Model& cur) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        snap_.batch_loss.push_back(static_cast<float>(loss));
        snap_.epoch = epoch;
        snap_.batch = k + 1;
        snap_.batches = n;
      }
      if ((k + 1) % std::max(1, setup_.redraw_every) == 0 || k + 1 == n) redraw(cur);
    };
    cb.on_epoch = [this](const EpochStats& st, const Model& cur) {
      std::lock_guard<std::mutex> lock(mutex_);
      snap_.epoch_accuracy.push_back(static_cast<float>(st.heldout_accuracy));
      model_ = cur;
    };
    std::string err;
    const int done = train_model(m, setup_.train, cb, err);
    std::lock_guard<std::mutex> lock(mutex_);
    snap_.running = false;
    snap_.finished = done == setup_.train.epochs;
    snap_.cancelled = done >= 0 && done < setup_.train.epochs;
    if (done < 0) snap_.error = err;
  });
  return true;
}

}  // namespace attn::s2s
