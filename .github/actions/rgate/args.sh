#!/usr/bin/env bash
# Splits the action's `args` input ($INPUT_ARGS) into words the way a
# POSIX shell splits a command line, and prints each word followed by a
# NUL byte (for `read -r -d ''`). Nothing is evaluated: the text is the
# user's, and it never reaches `eval`.
#
#   - spaces, tabs and newlines separate words, so a multi-line `args: |`
#     is one command line (a newline is a space, as inside `( ... )`);
#   - 'single quotes' keep everything literally;
#   - "double quotes" keep everything but \" \\ \$ \` and backslash-newline;
#   - a backslash outside quotes keeps the next character (backslash-newline
#     joins lines);
#   - `#` at the start of a word comments out the rest of the line;
#   - no globbing (`*` stays `*`), no `~` expansion.
#
# What a shell would do and this cannot is refused (exit 2) rather than
# passed on literally: `$` or a backtick outside single quotes (a variable
# or command substitution: give the value through a `${{ }}` expression, or
# single-quote it), and the operators `;` `&` `|` `<` `>` `(` `)` outside
# quotes, as is an unterminated quote. Messages are workflow `::error`s.
#
# Written for bash 3.2 (macOS's /bin/bash): no mapfile, no ${x,,}.
set -euo pipefail
LC_ALL=C
s="${INPUT_ARGS-}"
n=${#s}
i=0
word=""
have=0 # 1 once the current word has begun (a quoted '' is a word)
words=() # printed only once the whole input split: a refusal prints none

fail() {
  echo "::error title=rgate::args: $1" >&2
  exit 2
}
emit() {
  if [ "$have" = 1 ]; then words+=("$word"); fi
  word=""
  have=0
}

while [ "$i" -lt "$n" ]; do
  c=${s:i:1}
  case "$c" in
    ' ' | $'\t' | $'\n' | $'\r')
      emit
      i=$((i + 1))
      ;;
    "'")
      rest=${s:i+1}
      case "$rest" in
        *"'"*) ;;
        *) fail "unterminated ' quote" ;;
      esac
      part=${rest%%"'"*}
      word+=$part
      have=1
      i=$((i + 2 + ${#part}))
      ;;
    '"')
      have=1
      i=$((i + 1))
      closed=0
      while [ "$i" -lt "$n" ]; do
        c=${s:i:1}
        case "$c" in
          '"')
            closed=1
            i=$((i + 1))
            break
            ;;
          \\)
            d=${s:i+1:1}
            case "$d" in
              '$' | '`' | '"' | \\) word+=$d ;;
              $'\n') ;;
              *) word+="\\$d" ;;
            esac
            i=$((i + 2))
            ;;
          '$' | '`')
            fail "\`$c\` inside double quotes would be expanded by a shell, and the action expands nothing: give the value through a \${{ }} expression, or single-quote it"
            ;;
          *)
            word+=$c
            i=$((i + 1))
            ;;
        esac
      done
      [ "$closed" = 1 ] || fail 'unterminated " quote'
      ;;
    \\)
      if [ $((i + 1)) -lt "$n" ]; then
        d=${s:i+1:1}
        if [ "$d" != $'\n' ]; then
          word+=$d
          have=1
        fi
      fi
      i=$((i + 2))
      ;;
    '#')
      if [ "$have" = 0 ]; then
        rest=${s:i}
        case "$rest" in
          *$'\n'*) line=${rest%%$'\n'*} ;;
          *) line=$rest ;;
        esac
        i=$((i + ${#line}))
      else
        word+=$c
        i=$((i + 1))
      fi
      ;;
    '$' | '`')
      fail "\`$c\` would be expanded by a shell, and the action expands nothing: give the value through a \${{ }} expression, or single-quote it"
      ;;
    ';' | '&' | '|' | '<' | '>' | '(' | ')')
      fail "\`$c\` is a shell operator, not part of an argument; quote it if it belongs to a value"
      ;;
    *)
      word+=$c
      have=1
      i=$((i + 1))
      ;;
  esac
done
emit
if [ "${#words[@]}" -gt 0 ]; then printf '%s\0' "${words[@]}"; fi
