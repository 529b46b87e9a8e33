// Background training with snapshots for the app (see live_trainer.h).
#include "seq2seq/live_trainer.h"

#include <algorithm>

namespace attn::s2s {

LiveTrainer::~LiveTrainer() { cancel(); }

void LiveTrainer::cancel() { run_.stop(); }

void LiveTrainer::set_paused(bool paused) { run_.set_paused(paused); }

LiveSnapshot LiveTrainer::snapshot() const { return run_.snapshot(); }

Model LiveTrainer::model() const {
  std::lock_guard<std::mutex> lock(model_mutex_);
  return model_;
}

namespace {

// The example's translation by `m` and its alignment into `s`; false when it cannot translate.
bool draw_alignment(const Model& m, const std::string& example, LiveSnapshot& s) {
  ForwardCache<float> fc;
  std::string out, error;
  if (!translate(m, example, fc, out, error)) return false;
  const int rows = std::min(static_cast<int>(fc.steps.size()), static_cast<int>(out.size()) + 1);
  s.alignment = Mat<float>::Zero(rows, fc.src_len);
  if (m.config.score != Score::kNone)
    for (int i = 0; i < rows; ++i)
      s.alignment.row(i) = fc.steps[static_cast<size_t>(i)].alpha.row(0);
  s.output = out;
  ++s.alignment_serial;
  return true;
}

}  // namespace

void LiveTrainer::redraw(const Model& m) {
  LiveSnapshot drawn;
  if (!draw_alignment(m, setup_.example, drawn)) return;
  run_.update([&](LiveSnapshot& s) {
    s.alignment = std::move(drawn.alignment);
    s.output = std::move(drawn.output);
    ++s.alignment_serial;
  });
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
  {
    std::lock_guard<std::mutex> lock(model_mutex_);
    model_ = m;
  }
  LiveSnapshot first;
  draw_alignment(m, setup_.example, first);  // the untrained model's: close to uniform
  run_.start(std::move(first), [this, m](train::RunControl& control) mutable {
    TrainCallbacks cb;
    cb.control = &control;
    cb.on_batch = [this](int epoch, int k, int n, double loss, const Model& cur) {
      run_.update([&](LiveSnapshot& s) {
        s.batch_loss.push_back(static_cast<float>(loss));
        s.epoch = epoch;
        s.batch = k + 1;
        s.batches = n;
      });
      if ((k + 1) % std::max(1, setup_.redraw_every) == 0 || k + 1 == n) redraw(cur);
      if (setup_.after_batch) setup_.after_batch(epoch, k);
    };
    cb.on_epoch = [this](const EpochStats& st, const Model& cur) {
      run_.update([&](LiveSnapshot& s) {
        s.epoch_accuracy.push_back(static_cast<float>(st.heldout_accuracy));
      });
      std::lock_guard<std::mutex> lock(model_mutex_);
      model_ = cur;
    };
    std::string err;
    const int done = train_model(m, setup_.train, cb, err);
    return train::RunEnd{done == setup_.train.epochs, done < 0 ? err : ""};
  });
  return true;
}

}  // namespace attn::s2s
