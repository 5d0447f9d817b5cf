/**
 * The tasks of the `shell-basics` taskset: small file and shell chores, each with the files
 * its setup writes, the check that decides the reward, and a reference solution.
 *
 * @module
 */

/** One shell task: data, setup, check and solution. */
export interface ShellTask {
  /** Unique task name (the task's `name` field). */
  name: string;
  prompt: string;
  /** Expected number/word in the reply, for tasks that ask a question. */
  answer?: string;
  /** Files written (relative to the workdir) before the agent starts. */
  files?: Record<string, string>;
  /** Bash run in the workdir after the files are written. */
  setup?: string;
  /** Bash run in the workdir after the agent: exit 0 passes. */
  check?: string;
  /** Files that must exist with exactly this content (a final newline is optional). */
  expect?: Record<string, string>;
  /** Reference solution: bash commands, in order. */
  solution: string[];
  /** Reference final reply. */
  solutionText: string;
}

function lines(items: string[]): string {
  return items.map((l) => l + "\n").join("");
}

const SALES_ROWS = Array.from(
  { length: 37 },
  (_, i) => `${i + 1},item-${String.fromCharCode(97 + (i % 26))}${i},${((i * 7) % 50) + 1}`,
);

const USERS: [id: string, name: string, email: string][] = [
  ["1", "Ada", "ada@example.com"],
  ["2", "Brian", "brian@example.org"],
  ["3", "Chen", "chen@example.net"],
  ["4", "Dana", "dana@example.com"],
  ["5", "Emil", "emil@example.io"],
];

const WORDS = ["pear", "apple", "fig", "pear", "banana", "apple", "kiwi", "fig", "pear", "cherry"];
const UNIQUE_WORDS = [...new Set(WORDS)].sort();

const CONFIG_INI = lines([
  "[server]",
  "host=localhost",
  "port=8080",
  "",
  "[database]",
  "url=postgres://localhost:5432/app",
  "replica=db.internal",
]);

/** All shell-basics tasks, in task order. */
export const SHELL_TASKS: readonly ShellTask[] = [
  {
    name: "create-file",
    prompt:
      "Create a file named greeting.txt in the current directory whose only line is: Hello, verifiers!",
    expect: { "greeting.txt": "Hello, verifiers!\n" },
    solution: ["printf 'Hello, verifiers!\\n' > greeting.txt"],
    solutionText: "Created greeting.txt.",
  },
  {
    name: "count-csv-rows",
    prompt: "The file data/sales.csv has a header line followed by data rows. How many data rows " +
      "does it have (not counting the header)? Reply with the number.",
    answer: String(SALES_ROWS.length),
    files: { "data/sales.csv": lines(["id,item,quantity", ...SALES_ROWS]) },
    check: "test -f data/sales.csv",
    solution: ["tail -n +2 data/sales.csv | wc -l"],
    solutionText: String(SALES_ROWS.length),
  },
  {
    name: "fix-script",
    prompt:
      "The script sum.sh should print the sum of the integers from 1 to 10, but one line has " +
      "a bug. Fix that line so that `bash sum.sh` prints 55. Keep the loop.",
    files: {
      "sum.sh": lines([
        "#!/bin/bash",
        "total=0",
        "for i in $(seq 1 10); do",
        "  total=$((total - i))",
        "done",
        'echo "$total"',
      ]),
    },
    check: '[ "$(bash sum.sh)" = "55" ] && grep -q "seq 1 10" sum.sh',
    solution: [
      "sed 's/total - i/total + i/' sum.sh > sum.sh.new && mv sum.sh.new sum.sh",
      "bash sum.sh",
    ],
    solutionText: "Fixed the subtraction; sum.sh now prints 55.",
  },
  {
    name: "rename-files",
    prompt:
      "Rename every file in the photos directory that ends in .jpeg so that it ends in .jpg " +
      "instead, keeping the rest of each name and the contents unchanged.",
    files: Object.fromEntries([1, 2, 3, 4].map((i) => [`photos/img_${i}.jpeg`, `image ${i}\n`])),
    check: '[ -z "$(ls photos | grep "\\.jpeg$")" ] && [ "$(ls photos | wc -l)" -eq 4 ]',
    expect: Object.fromEntries([1, 2, 3, 4].map((i) => [`photos/img_${i}.jpg`, `image ${i}\n`])),
    solution: ['for f in photos/*.jpeg; do mv "$f" "${f%.jpeg}.jpg"; done', "ls photos"],
    solutionText: "Renamed the four .jpeg files to .jpg.",
  },
  {
    name: "largest-file",
    prompt: "Which file in the logs directory is the largest? Reply with its file name only.",
    answer: "worker.log",
    files: {
      "logs/app.log": "x".repeat(120) + "\n",
      "logs/worker.log": "y".repeat(2048) + "\n",
      "logs/db.log": "z".repeat(900) + "\n",
      "logs/cron.log": "w".repeat(15) + "\n",
    },
    check: "test -f logs/worker.log",
    solution: ["ls -S logs | head -n 1"],
    solutionText: "worker.log",
  },
  {
    name: "extract-field",
    prompt:
      "users.csv has the columns id,name,email and a header line. Write the email addresses " +
      "(the third column, without the header) to emails.txt, one per line, in file order.",
    files: { "users.csv": lines(["id,name,email", ...USERS.map((u) => u.join(","))]) },
    expect: { "emails.txt": lines(USERS.map((u) => u[2])) },
    solution: ["tail -n +2 users.csv | cut -d, -f3 > emails.txt", "cat emails.txt"],
    solutionText: "Wrote the five email addresses to emails.txt.",
  },
  {
    name: "make-executable",
    prompt:
      "Make the script hello.sh executable, run it as ./hello.sh, and reply with the number " +
      "it prints.",
    answer: "51",
    files: { "hello.sh": lines(["#!/bin/sh", "echo $((17 * 3))"]) },
    setup: "chmod 644 hello.sh",
    check: '[ -x hello.sh ] && [ "$(./hello.sh)" = "51" ]',
    solution: ["chmod +x hello.sh", "./hello.sh"],
    solutionText: "It prints 51.",
  },
  {
    name: "nested-dirs",
    prompt: "Create the directories project/src/utils, project/tests and project/docs, and an " +
      "empty file project/src/utils/__init__.py.",
    check: "[ -d project/src/utils ] && [ -d project/tests ] && [ -d project/docs ] && " +
      "[ -f project/src/utils/__init__.py ] && [ ! -s project/src/utils/__init__.py ]",
    solution: [
      "mkdir -p project/src/utils project/tests project/docs",
      "touch project/src/utils/__init__.py",
    ],
    solutionText: "Created the project tree.",
  },
  {
    name: "sort-uniq",
    prompt: "words.txt has one word per line, with repeats. Write its distinct words, sorted " +
      "alphabetically, one per line, to unique.txt, and reply with how many distinct words there are.",
    answer: String(UNIQUE_WORDS.length),
    files: { "words.txt": lines(WORDS) },
    expect: { "unique.txt": lines(UNIQUE_WORDS) },
    solution: ["LC_ALL=C sort -u words.txt > unique.txt", "wc -l < unique.txt"],
    solutionText: `There are ${UNIQUE_WORDS.length} distinct words.`,
  },
  {
    name: "replace-string",
    prompt: "In config.ini, replace every occurrence of localhost with 127.0.0.1 and leave " +
      "everything else unchanged.",
    files: { "config.ini": CONFIG_INI },
    expect: { "config.ini": CONFIG_INI.replaceAll("localhost", "127.0.0.1") },
    solution: [
      "sed 's/localhost/127.0.0.1/g' config.ini > config.ini.new && mv config.ini.new config.ini",
    ],
    solutionText: "Replaced localhost with 127.0.0.1 in config.ini.",
  },
];
