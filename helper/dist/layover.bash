# bash completion for layover. It asks the installed binary at completion
# time (`layover --help`, `layover VERB --help`, `layover sessions`), so new
# verbs, flags and sessions complete without editing this file.
_layover_sessions() {
    # `layover sessions [--trash]`: a header line, then NAME first per line
    # (names are [A-Za-z0-9._-] only, so the first field is the whole name).
    "$1" sessions $2 2>/dev/null | awk 'NR > 1 && $1 ~ /^[A-Za-z0-9._-]+$/ { print $1 }'
}

_layover() {
    local bin=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev=""
    [ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
    local IFS=$'\n'
    if [ "$COMP_CWORD" -eq 1 ]; then
        # The verbs: the first word of each usage line of `layover --help`.
        COMPREPLY=($(compgen -W "$("$bin" --help 2>/dev/null | awk '/^  [a-z]/ { print $1 }')" -- "$cur"))
        return
    fi
    local verb=${COMP_WORDS[1]}
    case $prev in
        --target | --cwd | --ro | --rw | --hide)
            COMPREPLY=($(compgen -d -- "$cur")); return ;;
        -o | --output)
            COMPREPLY=($(compgen -f -- "$cur")); return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$("$bin" "$verb" --help 2>&1 | grep -oE -- '--[a-z][a-z-]*=?' | sort -u)" -- "$cur"))
        [[ ${COMPREPLY[0]:-} == *= ]] && compopt -o nospace 2>/dev/null
        return
    fi
    local words=""
    case $verb in
        status | save | diff | apply | discard) words=$(_layover_sessions "$bin") ;;
        restore) words=$(_layover_sessions "$bin" --trash) ;;
    esac
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
    case $verb in
        show | undo | diff | apply)
            COMPREPLY+=($(compgen -f -X '!*.tar.zst' -- "$cur") $(compgen -d -- "$cur"))
            compopt -o filenames 2>/dev/null ;;
    esac
}
complete -F _layover layover
