"""Which programs may run unasked, with exactly which options (issue #26; SPEC §9).

An allowlist, not a denylist: an option that is not written here means "ask". Long options are
matched whole (`--output` is never `--outp`: GNU getopt and git accept any unambiguous
abbreviation, so a denylist by spelling is always one abbreviation short).

A spec is a string of options:

    -x      a short flag (may be bundled: `-rn`)
    -x:     a short option taking an argument (`-n 5`, `-n5`); `-x:P` when the argument is a path
    -x[]    a short option whose argument, if any, is attached (`git status -uno`)
    --name  a long flag
    --name= a long option taking an argument (`--lines=5`, `--lines 5`); `--name=P`: a path
    --name[=]  a long option whose argument, if any, follows `=` (`--color`, `--color=never`)

`DENIED` names, per program, the options that write or execute. They are not needed to decide
what runs unasked (anything unlisted asks); `Bash(prefix:*)` rules use them, so that allowing
`find` does not allow `find -delete` (README, "Permissions and safety").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evo_agent.session import GIT_SAFE_CONFIG as _DOOR_CONFIG


@dataclass(frozen=True)
class Spec:
    """The options and operands one program may take unasked."""

    options: str = ""
    operands: str = "path"          # "path": confined to the project; "text": not a file name
    pattern_first: bool = False     # grep/rg: the first operand is the pattern unless -e/-f gave one
    pattern_options: tuple[str, ...] = ()  # the options that give the pattern (or make none needed)
    digits: bool = False            # `head -20`, `grep -3`, `git log -5`
    max_operands: int | None = None
    any_words: bool = False         # a builtin that only prints its words (echo, printf)
    short: dict[str, Any] = field(default_factory=dict, compare=False)   # letter -> None | "text" | "path" | "attached"
    long: dict[str, Any] = field(default_factory=dict, compare=False)    # name -> None | "text" | "path" | "optional"

    def __post_init__(self) -> None:
        for item in self.options.split():
            if item.startswith("--"):
                name, eq, kind = item[2:].partition("=")
                if name.endswith("[") or kind.startswith("]"):
                    self.long[name.rstrip("[")] = "optional"
                else:
                    self.long[name] = ("path" if kind == "P" else "text") if eq else None
            elif item.endswith("[]"):
                self.short[item[1]] = "attached"
            else:
                letter, colon, kind = item[1], item[2:3], item[3:]
                self.short[letter] = ("path" if kind == "P" else "text") if colon else None


# grep without -D/--devices: `-D read` makes a recursive grep open the FIFOs and devices it skips by default.
GREP = ("-E -F -G -P -i -y -v -w -x -c -l -L -o -q -s -b -n -h -H -a -I -r -z -Z -T -U "
        "-e: -f:P -m: -A: -B: -C: -d: --color[=] --colour[=] --regexp= --file=P --max-count= "
        "--after-context= --before-context= --context= --directories= --include= --exclude= "
        "--exclude-dir= --label= --binary-files= --extended-regexp --fixed-strings --basic-regexp --perl-regexp "
        "--ignore-case --no-ignore-case --invert-match --word-regexp --line-regexp --count --files-with-matches "
        "--files-without-match --only-matching --quiet --silent --no-messages --byte-offset --line-number "
        "--no-filename --with-filename --text --recursive --null --null-data --initial-tab --line-buffered --binary")
RG = ("-n -N -i -S -s -w -x -v -l -c -F -o -H -I -u -a -U -P -q -0 -b -p "
      "-e: -f:P -g: -t: -T: -A: -B: -C: -m: -M: -d: -E: -r: -j: "
      "--line-number --no-line-number --ignore-case --smart-case --case-sensitive --word-regexp --line-regexp "
      "--invert-match --files-with-matches --files-without-match --count --count-matches --fixed-strings "
      "--only-matching --with-filename --no-filename --no-heading --heading --hidden --no-ignore --no-ignore-vcs "
      "--no-ignore-parent --no-ignore-dot --no-ignore-global --no-ignore-exclude --unrestricted --text --multiline "
      "--multiline-dotall --pcre2 --quiet --null --byte-offset --pretty --column --no-column --json --vimgrep "
      "--stats --trim --passthru --files --sort-files --glob-case-insensitive --no-messages --crlf --type-list "
      "--include-zero --one-file-system --max-columns-preview --sort= --sortr= --color= --colors= --regexp= "
      "--file=P --glob= --iglob= --type= --type-not= --after-context= --before-context= --context= --max-count= "
      "--max-columns= --max-depth= --max-filesize= --encoding= --replace= --threads= --context-separator= "
      "--field-match-separator= --path-separator= --ignore-file=P --engine=")
LS = ("-a -A -b -B -c -C -d -f -F -g -G -h -i -k -l -m -n -N -o -p -q -Q -r -R -s -S -t -u -U -v -x -X -Z -1 "
      "-I: -w: -T: --all --almost-all --escape --ignore-backups --directory --classify[=] --file-type "
      "--human-readable --si --inode --kibibytes --numeric-uid-gid --literal --indicator-style= "
      "--hide-control-chars --show-control-chars --quote-name --reverse --recursive --size --sort= --time= "
      "--time-style= --group-directories-first --no-group --color[=] --format= --full-time --hide= --ignore= "
      "--width= --tabsize= --zero --author --context")
HEAD_TAIL = "-n: -c: -q -v -z --lines= --bytes= --quiet --silent --verbose --zero-terminated"

# git: options common to log, show and diff (their diff output), then per subcommand. Never listed:
# --output, --ext-diff, --textconv, --no-index, -O (an order file), --show-signature, global options,
# --submodule (=diff runs a diff inside each submodule, under that submodule's own drivers),
# --ignore-submodules (the plan always gives =all: a later one would win).
# Operands are revisions or paths (git decides which, and `git diff a /x` falls into --no-index mode
# for a path outside the worktree): every one must resolve inside the project, as a path would.
GIT_DIFF_OUTPUT = (
    "-p -u -s -z -w -b -R -a -W -M[] -C[] -B[] -U[] -S: -G: --patch --no-patch --stat[=] --shortstat --numstat "
    "--dirstat[=] --summary --name-only --name-status --raw --check --full-index --abbrev[=] --color[=] "
    "--no-color --color-moved[=] --word-diff[=] --word-diff-regex= --color-words[=] --unified[=] "
    "--ignore-all-space --ignore-space-change --ignore-space-at-eol --ignore-blank-lines --ignore-cr-at-eol "
    "--minimal --patience --histogram --diff-algorithm= --find-renames[=] --find-copies[=] --no-renames "
    "--diff-filter= --relative[=] --no-relative --text --exit-code --quiet --src-prefix= --dst-prefix= "
    "--no-prefix --function-context --indent-heuristic --no-indent-heuristic --pickaxe-all "
    "--pickaxe-regex --cc --compact-summary --patch-with-stat")
GIT_LOG = (
    "-n: -i -E -F -P -g --oneline --graph --decorate[=] --no-decorate --all --branches[=] --tags[=] --remotes[=] "
    "--format= --pretty[=] --max-count= --skip= --since= --until= --after= --before= --author= --committer= "
    "--grep= --all-match --invert-grep --regexp-ignore-case --reverse --date= --no-merges --merges --first-parent "
    "--abbrev-commit --no-abbrev-commit --follow --topo-order --date-order --author-date-order --left-right "
    "--cherry-pick --cherry-mark --cherry --boundary --simplify-by-decoration --full-history --ancestry-path "
    "--source --use-mailmap --encoding= --expand-tabs[=] --no-expand-tabs --children --parents --walk-reflogs "
    "--no-walk[=] --count")
GIT_SUBCOMMANDS: dict[str, Spec] = {
    "status": Spec("-s -b -z -u[] --short --branch --porcelain[=] --long --show-stash --ahead-behind "
                   "--no-ahead-behind --renames --no-renames --find-renames[=] --untracked-files[=] --ignored[=] "
                   "--column[=] --no-column"),
    "log": Spec(f"{GIT_DIFF_OUTPUT} {GIT_LOG}", digits=True),
    "show": Spec(f"{GIT_DIFF_OUTPUT} {GIT_LOG}", digits=True),
    "diff": Spec(f"{GIT_DIFF_OUTPUT} --cached --staged --merge-base"),
}
# Put before the subcommand: nothing the repository's configuration names may run (pager, fsmonitor,
# hooks, external diff, signature programs, transports): the settings evo-agent's own git door uses
# (session/git.py), one list for both. After the subcommand: no submodule is entered (its own config
# and filters would apply there), and for log/show/diff no textconv, no diff driver.
GIT_SAFE_CONFIG = ("--no-pager", *(word for setting in _DOOR_CONFIG for word in ("-c", setting)))
GIT_NO_SUBMODULES = ("--ignore-submodules=all",)
GIT_SAFE_DIFF = ("--no-textconv", "--no-ext-diff")
# Put right after rg: no configuration file (`$RIPGREP_CONFIG_PATH` holds options the allowlist never judged, and a
# relative one names the clone's committed `.ripgreprc`: `--pre=sh`), and no message quoting an ignore file's lines
# (a committed `.ignore` linking to `~/.netrc` printed each line that is not a valid glob; ripgrep 13 reports the
# start directory's and parents' ignore files as plain errors, which only --no-messages silences: a missing path
# then shows as exit code 2 alone). No listed option undoes any of them.
RG_SAFE = ("--no-config", "--no-messages", "--no-ignore-messages")

PROGRAMS: dict[str, Spec] = {
    "ls": Spec(LS),
    "cat": Spec("-A -b -e -E -n -s -t -T -u -v --show-all --number-nonblank --show-ends --number --squeeze-blank "
                "--show-tabs --show-nonprinting"),
    "head": Spec(HEAD_TAIL, digits=True),
    "tail": Spec(HEAD_TAIL, digits=True),  # never -f/-F/--follow: it would not end
    "wc": Spec("-c -m -l -L -w --bytes --chars --lines --max-line-length --words"),
    "grep": Spec(GREP, pattern_first=True, pattern_options=("e", "f", "regexp", "file"), digits=True),
    "egrep": Spec(GREP, pattern_first=True, pattern_options=("e", "f", "regexp", "file"), digits=True),
    "fgrep": Spec(GREP, pattern_first=True, pattern_options=("e", "f", "regexp", "file"), digits=True),
    "rg": Spec(RG, pattern_first=True, pattern_options=("e", "f", "regexp", "file", "files", "type-list")),
    "stat": Spec("-L -f -t -c: --dereference --file-system --terse --format= --printf= --cached="),
    "nl": Spec("-b: -d: -f: -h: -i: -l: -n: -p -s: -v: -w: --body-numbering= --section-delimiter= "
               "--footer-numbering= --header-numbering= --line-increment= --join-blank-lines= --number-format= "
               "--no-renumber --number-separator= --starting-line-number= --number-width="),
    "cut": Spec("-b: -c: -d: -f: -n -s -z --bytes= --characters= --delimiter= --fields= --complement "
                "--only-delimited --output-delimiter= --zero-terminated"),
    # sort without -o/--output, -T, --compress-program, --files0-from, --random-source.
    "sort": Spec("-b -d -f -g -h -i -M -n -R -r -V -c -C -m -s -u -z -k: -t: -S: --ignore-leading-blanks "
                 "--dictionary-order --ignore-case --general-numeric-sort --human-numeric-sort --ignore-nonprinting "
                 "--month-sort --numeric-sort --random-sort --reverse --version-sort --check[=] --merge --stable "
                 "--unique --zero-terminated --key= --field-separator= --buffer-size= --sort= --parallel="),
    # uniq's second operand is a file it writes: one operand at most.
    "uniq": Spec("-c -d -D -i -u -z -f: -s: -w: --count --repeated --all-repeated[=] --group[=] --ignore-case "
                 "--unique --zero-terminated --skip-fields= --skip-chars= --check-chars=", max_operands=1),
    "tr": Spec("-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1", operands="text",
               max_operands=2),
    "basename": Spec("-a -s: -z --multiple --suffix= --zero", operands="text"),
    "dirname": Spec("-z --zero", operands="text"),
    "pwd": Spec("-L -P", max_operands=0),
    "whoami": Spec(max_operands=0),
    "sleep": Spec(operands="text"),
    "echo": Spec(any_words=True),
    "printf": Spec(any_words=True),
    "true": Spec(any_words=True),
    "false": Spec(any_words=True),
}
# Shell builtins: bash never looks them up in PATH.
BUILTINS = frozenset({"echo", "printf", "pwd", "true", "false"})

# find: primaries and what follows each. Never: -exec -execdir -ok -okdir -delete -fprint -fprint0
# -fprintf -fls (they run or write), -L/-follow (they leave the project through symlinks), -files0-from.
FIND_NO_ARG = frozenset({
    "-print", "-print0", "-ls", "-prune", "-empty", "-true", "-false", "-depth", "-d", "-mount", "-xdev", "-noleaf",
    "-daystart", "-quit", "-nouser", "-nogroup", "-readable", "-writable", "-executable", "-not", "-a", "-o",
    "-and", "-or", "!", ",", "-ignore_readdir_race", "-noignore_readdir_race"})
FIND_TEXT_ARG = frozenset({
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname", "-ilname",
    "-type", "-xtype", "-size", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-maxdepth", "-mindepth",
    "-perm", "-user", "-group", "-uid", "-gid", "-links", "-inum", "-printf", "-regextype", "-used"})
FIND_PATH_ARG = frozenset({"-newer", "-anewer", "-cnewer", "-samefile"})
FIND_LEADING = frozenset({"-P", "-H"})

# The options that write or execute, per program (and per git subcommand): what a `Bash(prefix:*)` rule
# still asks about. Long names match any abbreviation of them; find's primaries match whole.
DENIED_LONG: dict[str, tuple[str, ...]] = {
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"),
    "sort": ("output", "compress-program", "temporary-directory"),
    "rg": ("pre", "search-zip", "hostname-bin"),
    # --template (clone, init: its hooks/ are copied in and run), --config (clone: the new repository's, whose
    # core.hooksPath runs at the checkout), --extcmd (difftool)
    "git": ("output", "ext-diff", "textconv", "exec", "upload-pack", "receive-pack", "open-files-in-pager",
            "template", "config", "extcmd"),
    "file": ("compile",),
}
DENIED_SHORT: dict[str, str] = {"sort": "oT", "rg": "z", "file": "C", "git": "O"}
# git's short spellings of those, per subcommand: the same letter is harmless elsewhere (`git add -u`, `git commit
# -c HEAD`). clone -u is --upload-pack, -c --config; rebase -x is --exec; difftool -x is --extcmd.
DENIED_GIT_SHORT: dict[str, str] = {"clone": "uc", "rebase": "x", "difftool": "x", "ls-remote": "u"}


def denied_option(program: str, word: str, subcommand: str | None = None) -> bool:
    """Whether `word`, given to `program` (and, for git, its `subcommand`), is (or abbreviates, or bundles) one of
    its writing/executing options."""
    if program == "find":
        return word in DENIED_LONG["find"]
    if word.startswith("--"):
        name = word[2:].partition("=")[0]
        return bool(name) and any(d.startswith(name) for d in DENIED_LONG.get(program, ()))
    if word.startswith("-") and len(word) > 1:
        letters = DENIED_SHORT.get(program, "") + (DENIED_GIT_SHORT.get(subcommand or "", "") if program == "git"
                                                   else "")
        return bool(set(word[1:]) & set(letters))
    return False


__all__ = ["BUILTINS", "DENIED_GIT_SHORT", "DENIED_LONG", "FIND_LEADING", "FIND_NO_ARG", "FIND_PATH_ARG",
           "FIND_TEXT_ARG", "GIT_NO_SUBMODULES", "GIT_SAFE_CONFIG", "GIT_SAFE_DIFF", "GIT_SUBCOMMANDS", "PROGRAMS",
           "RG_SAFE", "Spec", "denied_option"]
