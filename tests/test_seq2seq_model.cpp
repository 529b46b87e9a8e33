// Model files (round trip; truncated, foreign, corrupted and inconsistent files rejected),
// greedy decoding on a hand-built model, and training: the loss falls, runs are reproducible.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "reference.h"
#include "seq2seq/model_io.h"
#include "seq2seq/trainer.h"

namespace attn::s2s {
namespace {

// FNV-1a written out here again so the tests can forge files with a valid checksum.
void reseal(std::string& bytes) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i + 8 < bytes.size(); ++i) {
    h ^= static_cast<unsigned char>(bytes[i]);
    h *= 1099511628211ull;
  }
  for (int i = 0; i < 8; ++i)
    bytes[bytes.size() - 8 + i] = static_cast<char>((h >> (8 * i)) & 0xFF);
}

TEST(Seq2SeqModelFile, RoundTripKeepsEverything) {
  for (Score s : {Score::kNone, Score::kBahdanau, Score::kLocalP, Score::kLocalM}) {
    Model m = new_date_model(s, 8, 4, 3, 5);
    m.info = "trained by a test";
    const std::string bytes = serialize_model(m);
    Model back;
    std::string error;
    ASSERT_TRUE(parse_model(bytes, "mem", back, error)) << error;
    EXPECT_EQ(back.config.score, s);
    EXPECT_EQ(back.config.hidden, 8);
    EXPECT_EQ(back.config.embed, 4);
    EXPECT_EQ(back.config.window, 3);
    EXPECT_EQ(back.in_vocab.chars, m.in_vocab.chars);
    EXPECT_EQ(back.out_vocab.chars, m.out_vocab.chars);
    EXPECT_EQ(back.info, m.info);
    std::vector<const Mat<float>*> a, b;
    m.params.visit([&a](const char*, const Mat<float>& x) { a.push_back(&x); });
    back.params.visit([&b](const char*, const Mat<float>& x) { b.push_back(&x); });
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(*a[i], *b[i]);
    // Through a real file, written atomically.
    const std::string path = test::temp_path("roundtrip.s2s");
    ASSERT_TRUE(save_model(m, path, error)) << error;
    ASSERT_TRUE(load_model(path, back, error)) << error;
    EXPECT_EQ(serialize_model(back), bytes);
  }
}

TEST(Seq2SeqModelFile, RejectsTruncatedForeignAndCorruptedFiles) {
  const Model m = new_date_model(Score::kGeneral, 8, 4, 3, 5);
  const std::string bytes = serialize_model(m);
  Model out;
  std::string error;
  for (size_t n = 0; n < bytes.size(); n += (n < 200 ? 1 : 37)) {
    EXPECT_FALSE(parse_model(bytes.substr(0, n), "cut", out, error)) << "length " << n;
    EXPECT_NE(error.find("'cut'"), std::string::npos) << error;
  }
  EXPECT_FALSE(parse_model("\x89PNG\r\n\x1a\n whatever follows", "img.png", out, error));
  EXPECT_NE(error.find("bad magic"), std::string::npos) << error;

  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x10;
  EXPECT_FALSE(parse_model(flipped, "f", out, error));
  EXPECT_NE(error.find("checksum"), std::string::npos) << error;

  std::string extra = bytes;
  extra.insert(extra.size() - 8, "xyz");
  reseal(extra);
  EXPECT_FALSE(parse_model(extra, "f", out, error));
  EXPECT_NE(error.find("unexpected bytes"), std::string::npos) << error;

  std::string version = bytes;
  version[8] = 2;
  reseal(version);
  EXPECT_FALSE(parse_model(version, "f", out, error));
  EXPECT_NE(error.find("version 2"), std::string::npos) << error;

  std::string future = bytes;
  future[8] = 3;
  reseal(future);
  EXPECT_FALSE(parse_model(future, "f", out, error));
  EXPECT_NE(error.find("version 3 is not supported"), std::string::npos) << error;

  std::string score = bytes;
  score[12] = 42;
  reseal(score);
  EXPECT_FALSE(parse_model(score, "f", out, error));
  EXPECT_NE(error.find("score"), std::string::npos) << error;

  // A NaN in the last tensor (b_s) under a valid checksum.
  std::string nan = bytes;
  const float q = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(&nan[nan.size() - 8 - sizeof(float)], &q, sizeof q);
  reseal(nan);
  EXPECT_FALSE(parse_model(nan, "f", out, error));
  EXPECT_NE(error.find("not finite"), std::string::npos) << error;

  EXPECT_FALSE(load_model(test::temp_path("missing.s2s"), out, error));
  EXPECT_NE(error.find("cannot read"), std::string::npos) << error;
}

// local-m's window: at step t it covers the input positions j within D of p_t = min(t, len − 1),
// separately for every row of a ragged batch, and the weights are a distribution over it.
TEST(Seq2SeqLocalM, WindowFollowsTheDiagonalOfEachRow) {
  Model m = new_date_model(Score::kLocalM, 8, 4, 2, 3);
  Batch b;
  std::string error;
  for (const char* s : {"on 1 jan 1999 at noon", "3.4.05", "20491231"}) {
    std::vector<int> ids;
    ASSERT_TRUE(encode(m.in_vocab, s, ids, error)) << error;
    b.src.push_back(ids);
  }
  ForwardCache<float> fc;
  forward(m.config, m.params, b, fc, 11);
  const int D = m.config.window;
  for (int t = 0; t < 11; ++t) {
    const auto& st = fc.steps[static_cast<size_t>(t)];
    for (int row = 0; row < 3; ++row) {
      const int len = static_cast<int>(b.src[static_cast<size_t>(row)].size());
      const int centre = std::min(t, len - 1);
      EXPECT_EQ(st.pos(row, 0), float(centre)) << "row " << row << " t " << t;
      double sum = 0;
      for (int j = 0; j < fc.src_len; ++j) {
        const bool visible = j < len && std::abs(j - centre) <= D;
        EXPECT_EQ(st.valid(row, j) != 0.0f, visible) << "row " << row << " t " << t << " j " << j;
        if (!visible) {
          EXPECT_EQ(st.alpha(row, j), 0.0f);
        }
        sum += st.alpha(row, j);
      }
      EXPECT_NEAR(sum, 1.0, 1e-5);
    }
  }
  // Written out for "3.4.05" (6 characters) with D = 2: step 0 sees "3.4", step 9 (p_t
  // clamped to 5) sees "05" and the dot before it.
  EXPECT_EQ(fc.steps[0].valid.row(1).head(6), (Mat<float>(1, 6) << 1, 1, 1, 0, 0, 0).finished());
  EXPECT_EQ(fc.steps[9].valid.row(1).head(6), (Mat<float>(1, 6) << 0, 0, 0, 1, 1, 1).finished());
}

// A decoder built by hand that counts: after <s> it says '0', after digit k it says k + 1, after
// '9' it says </s>. The GRU's update gate is shut (b_z = −30), so s_t = tanh(5 · onehot(y_{t−1})).
Model counting_model(Score score) {
  Model m = new_date_model(score, 14, 13, 2, 1);
  const int V = m.config.out_vocab;  // 13: <s>, </s>, 0–9, '-'
  m.params = m.params.zeros_like();
  m.params.emb_out.topLeftCorner(V, V).setIdentity();
  auto& d = m.params.dec;
  const int H = 14;
  d.b.leftCols(H).setConstant(-30.0f);
  d.wx.block(0, 2 * H, V, V) = 5.0f * Mat<float>::Identity(V, V);
  m.params.w_c.topLeftCorner(V, V).setIdentity();  // h̃ = tanh(s) on the first V units
  auto next = [](int id) { return id == kSos ? 2 : id == 11 ? kEos : id + 1; };
  for (int k = 0; k < V; ++k)
    if (k != kEos && k != 12) m.params.w_s(k, next(k)) = 10.0f;
  return m;
}

TEST(Seq2SeqDecode, HandBuiltCountingModel) {
  for (Score s : {Score::kNone, Score::kDot, Score::kBahdanau, Score::kLocalM}) {
    const Model m = counting_model(s);
    ForwardCache<float> fc;
    std::string out, error;
    ASSERT_TRUE(translate(m, "22 nov 2026", fc, out, error)) << error;
    EXPECT_EQ(out, "0123456789") << score_name(s);
    EXPECT_EQ(predict(m, {"x", "1.2.26"}), (std::vector<std::string>{"0123456789", "0123456789"}));
    if (s == Score::kNone) continue;
    // Each row of weights is a distribution over the visible input characters.
    for (const auto& st : fc.steps) {
      EXPECT_NEAR(st.alpha.sum(), 1.0, 1e-5);
      for (int j = 0; j < fc.src_len; ++j) EXPECT_GE(st.alpha(0, j), 0.0f);
    }
  }
  ForwardCache<float> fc;
  std::string out, error;
  EXPECT_FALSE(translate(counting_model(Score::kDot), "22 Nov", fc, out, error));
  EXPECT_NE(error.find("character 3"), std::string::npos) << error;
  EXPECT_FALSE(translate(counting_model(Score::kDot), "", fc, out, error));
}

TEST(Seq2SeqTrain, LossFallsAndRunsAreReproducible) {
  TrainOptions o;
  o.epochs = 3;
  o.batch = 16;
  o.train_size = 320;
  o.heldout_size = 50;
  o.max_length = 20;
  o.lr = 1e-2;
  o.threads = 2;
  std::vector<double> losses;
  TrainCallbacks cb;
  cb.on_epoch = [&losses](const EpochStats& st, const Model&) { losses.push_back(st.loss); };
  Model a = new_date_model(Score::kBahdanau, 12, 8, 4, 3);
  std::string error;
  ASSERT_EQ(train_model(a, o, cb, error), 3) << error;
  ASSERT_EQ(losses.size(), 3u);
  EXPECT_LT(losses[0], std::log(13.0));  // below the uniform guess over 13 symbols
  EXPECT_LT(losses[2], 0.8 * losses[0]);
  EXPECT_LT(losses[1], losses[0]);

  Model b = new_date_model(Score::kBahdanau, 12, 8, 4, 3);
  cb.on_epoch = nullptr;
  ASSERT_EQ(train_model(b, o, cb, error), 3);
  EXPECT_EQ(serialize_model(a), serialize_model(b));  // same seed and threads: same bits

  // A stop request before the first batch keeps the model as it was.
  std::atomic<bool> stop{true};
  cb.stop = &stop;
  Model c = new_date_model(Score::kBahdanau, 12, 8, 4, 3);
  const std::string before = serialize_model(c);
  EXPECT_EQ(train_model(c, o, cb, error), 0);
  EXPECT_EQ(serialize_model(c), before);
}

TEST(Seq2SeqTrain, ThreadsSplitTheBatchWithoutChangingTheGradient) {
  const Model m = new_date_model(Score::kConcat, 12, 6, 4, 8);
  Batch b;
  std::string error;
  for (const char* s : {"22.11.2026", "nov 22 26", "on 1 jan 1999 at noon", "20491231", "3/4/05"}) {
    std::vector<int> ids, tgt;
    encode(m.in_vocab, s, ids, error);
    b.src.push_back(ids);
    encode(m.out_vocab, "2026-11-22", tgt, error);
    tgt.push_back(kEos);
    b.tgt.push_back(tgt);
  }
  Params<float> g1, g3;
  const double l1 = batch_gradient(m, b, 1, g1), l3 = batch_gradient(m, b, 3, g3);
  EXPECT_NEAR(l1, l3, 1e-5);
  std::vector<const Mat<float>*> a, c;
  g1.visit([&a](const char*, const Mat<float>& x) { a.push_back(&x); });
  g3.visit([&c](const char*, const Mat<float>& x) { c.push_back(&x); });
  for (size_t i = 0; i < a.size(); ++i) EXPECT_LT((*a[i] - *c[i]).cwiseAbs().maxCoeff(), 1e-5);
}

}  // namespace
}  // namespace attn::s2s
