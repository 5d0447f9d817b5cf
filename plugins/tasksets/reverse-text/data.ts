/**
 * Sentences of the `reverse-text` taskset (written for verifiers-ts).
 *
 * @module
 */

/** The sentences to reverse, in task order. */
export const SENTENCES: readonly string[] = [
  "The quick brown fox jumps over the lazy dog.",
  "A journey of a thousand miles begins with a single step.",
  "Every cloud drifts east when the evening wind picks up.",
  "Seven blue boats rocked gently in the quiet harbor.",
  "She wrote the recipe on the back of an old train ticket.",
  "Bright lanterns lined the narrow street during the festival.",
  "The library closes at nine, but the reading room stays open.",
  "Fresh bread and strong coffee make a fine Sunday morning.",
  "He counted forty-two steps from the gate to the front door.",
  "Mountains look closer on clear days after the rain.",
  "Our garden grew more tomatoes than we could possibly eat.",
  "The old clock in the hallway chimes a minute late.",
  "Please return the borrowed umbrella before the next storm.",
  "Penguins waddle slowly but swim with surprising speed.",
  "The museum keeps a map of the city drawn in 1852.",
  "Quiet rivers often run deeper than noisy streams.",
  "A small kite caught the breeze and climbed above the trees.",
  "Tuesday's meeting moved to the room with the green chairs.",
  "The baker hums the same tune while shaping every loaf.",
  "Stars were scattered like salt across the dark sky.",
];
