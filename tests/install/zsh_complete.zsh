# Complete command lines in a real interactive zsh (under zpty), with compinit
# and the completion functions found in DIR. For each LINE, as if typed and
# then TAB, OUT gets every candidate the completion offered (after zsh's own
# matching), one per line, then a line END.
#   zsh -f zsh_complete.zsh DIR OUT 'layover ' 'layover apply --'
zmodload zsh/zpty || exit 3
dir=$1 out=$2
shift 2
: >$out
zpty comp zsh -f -i || exit 3
# The inner shell: no prompt, no rc files; compinit over DIR (no dump file);
# compadd wrapped so that the matches a completion function adds are appended
# to OUT (calls that only filter, with -O, -A or -D, pass straight through),
# and END once each completion is over.
zpty -w comp "PS1= PROMPT= RPROMPT=; fpath=(${(q)dir} \$fpath); autoload -Uz compinit && compinit -u -D"
zpty -w comp "compadd() { if (( \$@[(I)-[OAD]] )); then builtin compadd \"\$@\"; return; fi;" \
    "local -a got; builtin compadd -O got \"\$@\"; print -rl -- \$got >>${(q)out}; builtin compadd \"\$@\"; }"
# (compsys empties comppostfuncs after each completion: TAB sets it again.)
zpty -w comp "_zc_end() { print -r -- END >>${(q)out}; }; _zc_tab() { comppostfuncs=(_zc_end); zle complete-word; }"
zpty -w comp "zle -N _zc_tab; bindkey '^I' _zc_tab"
integer n=0 i
local -a ends
for line in "$@"; do
    # TAB completes; Ctrl+U then clears the line for the next one.
    zpty -w -n comp "${line}"$'\t'
    (( n++ ))
    for (( i = 0; i < 400; i++ )); do
        ends=(${(M)${(f)"$(<$out)"}:#END})
        (( $#ends >= n )) && break
        sleep 0.025
    done
    (( i < 400 )) || { print -u2 "zsh_complete: no completion of '$line' within 10 s"; zpty -d comp; exit 1; }
    zpty -w -n comp $'\C-u'
done
zpty -d comp
