// Messages that name fields, said in a front end's words (attention/format.h's name_fields).
#include <gtest/gtest.h>

#include "attention/format.h"

namespace attn {
namespace {

const FieldNames kFlags = {{"n_embd", "--embd"}, {"n_head", "--heads"}, {"steps", "--steps"}};

TEST(FieldNames, TheOpeningFieldAndEveryUnderscoredOneAreRenamed) {
  EXPECT_EQ(name_fields("n_embd: 48 is not a positive multiple of n_head 5", kFlags),
            "--embd: 48 is not a positive multiple of --heads 5");
  EXPECT_EQ(name_fields("steps: at least 1", kFlags), "--steps: at least 1");
  EXPECT_EQ(name_fields("n_head/n_embd: both", kFlags), "--heads/--embd: both");
}

TEST(FieldNames, OrdinaryWordsAndOtherNamesAreLeftAlone) {
  // "steps" is an ordinary word past the opening field.
  EXPECT_EQ(name_fields("warmup: more steps than the run", kFlags),
            "warmup: more steps than the run");
  // Names that merely contain a field.
  EXPECT_EQ(name_fields("kv_n_head and n_heads and n_embd_x", kFlags),
            "kv_n_head and n_heads and n_embd_x");
  // "steps" opening without a colon is a word.
  EXPECT_EQ(name_fields("steps are counted", kFlags), "steps are counted");
  EXPECT_EQ(name_fields("", kFlags), "");
  EXPECT_EQ(name_fields("n_head: 0", {}), "n_head: 0");
}

}  // namespace
}  // namespace attn
