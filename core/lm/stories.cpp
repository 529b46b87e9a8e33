// The story grammar (see stories.h): a hero, a friend, a thing they find, a place, and what
// happens, each sentence picked from a few patterns with the slots filled in.
#include "lm/stories.h"

#include <vector>

#include "lm/train_data.h"

namespace attn::lm {
namespace {

struct Person {
  const char* name;
  bool she;
};

const Person kNames[] = {{"Tom", false},  {"Mia", true},  {"Ben", false},  {"Lily", true},
                         {"Sam", false},  {"Anna", true}, {"Max", false},  {"Lucy", true},
                         {"Leo", false},  {"Emma", true}, {"Jack", false}, {"Nora", true},
                         {"Finn", false}, {"Rosa", true}, {"Hugo", false}, {"Ella", true}};
const char* kAnimals[] = {"cat",  "dog",   "bird", "rabbit", "fox",
                          "bear", "mouse", "duck", "frog",   "owl"};
const char* kKinds[] = {"little", "small", "big", "happy", "brave", "kind", "shy", "clever"};
const char* kPlaces[] = {"in the park",     "in the garden", "in the forest",
                         "by the river",    "on the beach",  "on the farm",
                         "near the school", "on the hill",   "in the town"};
const char* kThings[] = {"ball", "kite", "hat",   "box",    "book",
                         "boat", "drum", "shell", "flower", "key"};
const char* kColours[] = {"red", "blue", "green", "yellow", "shiny", "old", "new", "big"};
const char* kFeelings[] = {"happy", "excited", "proud", "surprised", "glad"};
const char* kFoods[] = {"apples", "cake", "cookies", "bread and honey", "soup", "pears"};
const char* kTimes[] = {"One day", "One morning", "One sunny day", "After lunch"};
const char* kFindings[] = {"under a tree", "in the grass", "near a big rock", "by the door"};

template <typename T, size_t N>
const T& pick(Rng& rng, const T (&a)[N]) {
  return a[static_cast<size_t>(rng.below(static_cast<int>(N)))];
}

std::string capital(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::string story(Rng& rng) {
  const Person& hero = pick(rng, kNames);
  const Person* friend_ = &pick(rng, kNames);
  while (friend_ == &hero) friend_ = &pick(rng, kNames);
  const std::string h = hero.name, f = friend_->name;
  const std::string he = hero.she ? "she" : "he", his = hero.she ? "her" : "his";
  const std::string animal = pick(rng, kAnimals), kind = pick(rng, kKinds);
  const std::string place = pick(rng, kPlaces), thing = pick(rng, kThings);
  const std::string colour = pick(rng, kColours), food = pick(rng, kFoods);
  std::string friend_animal = pick(rng, kAnimals);
  std::vector<std::string> s;
  switch (rng.below(3)) {
    case 0:
      s.push_back("Once upon a time, there was a " + kind + " " + animal + " named " + h + ".");
      break;
    case 1:
      s.push_back(h + " was a " + kind + " " + animal + " who lived " + place + ".");
      break;
    default:
      s.push_back("There was once a " + kind + " " + animal + ". Its name was " + h + ".");
  }
  if (rng.below(2) == 0)
    s.push_back(h + " lived " + place + " with " + his + " mother.");
  else
    s.push_back("Every day, " + h + " liked to play " + place + ".");
  s.push_back(std::string(pick(rng, kTimes)) + ", " + h + " found a " + colour + " " + thing + " " +
              pick(rng, kFindings) + ".");
  if (rng.below(2) == 0)
    s.push_back(h + " was very " + pick(rng, kFeelings) + ".");
  else
    s.push_back("\"What a nice " + thing + "!\" said " + h + ".");
  s.push_back(h + " showed the " + colour + " " + thing + " to " + f + " the " + friend_animal +
              ".");
  s.push_back(f + " said, \"Can I play with your " + thing + ", " + h + "?\"");
  s.push_back(capital(he) + " said, \"Yes, let us play together!\"");
  s.push_back(h + " and " + f + " played with the " + thing + " all day.");
  if (rng.below(2) == 0) {
    s.push_back("Then the " + thing + " fell into the water, and " + h + " was sad.");
    s.push_back(f + " helped " + h + " get the " + thing + " back.");
  }
  if (rng.below(2) == 0) s.push_back("Later they sat " + place + " and ate " + food + ".");
  switch (rng.below(3)) {
    case 0:
      s.push_back("At night, " + h + " went home and slept. The end.");
      break;
    case 1:
      s.push_back(h + " and " + f + " were good friends. The end.");
      break;
    default:
      s.push_back("From that day on, " + h + " always shared " + his + " " + thing + " with " + f +
                  ". The end.");
  }
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : " ") + x;
  return out;
}

}  // namespace

size_t stories_bytes(int count, uint64_t seed) {
  Rng rng(seed);
  size_t bytes = 0;
  for (int i = 0; i < count; ++i) bytes += story(rng).size() + 2;
  return bytes;
}

std::string write_stories(int count, uint64_t seed) {
  Rng rng(seed);
  std::string out;
  for (int i = 0; i < count; ++i) out += story(rng) + "\n\n";
  return out;
}

}  // namespace attn::lm
