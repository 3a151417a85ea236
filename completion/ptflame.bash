# bash completion for ptflame. Installed as
# share/bash-completion/completions/ptflame by `meson install`; to try it
# from a build tree: source completion/ptflame.bash
#
# Commands and options are read from ptflame itself (`ptflame --help`,
# `ptflame CMD --help`), so they match the installed program. An option
# whose help shows a FILE or DIR argument completes file or directory names.

_ptflame_help() { # CMD [--emulate]: the help text, cached per command line
	local key="$1 $2"
	if [ "$key" != "${_ptflame_help_key-}" ]; then
		_ptflame_help_text=$("$_ptflame_bin" "$@" --help 2>/dev/null)
		_ptflame_help_key=$key
	fi
	printf '%s\n' "$_ptflame_help_text"
}

_ptflame() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local cmd="" emulate="" i w arg
	_ptflame_bin=${COMP_WORDS[0]}
	COMPREPLY=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [ -z "$cmd" ] && [[ $w != -* ]]; then
			cmd=$w
		elif [ "$cmd" = record ] && [ "$w" = --emulate ]; then
			emulate=--emulate
		elif [ "$cmd" = record ] && [ "$w" = -- ]; then
			# the traced command and its arguments
			if [ "$i" -eq $((COMP_CWORD - 1)) ]; then
				mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
			else
				mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			fi
			return 0
		fi
	done
	if [ -z "$cmd" ]; then
		mapfile -t COMPREPLY < <(compgen -W "$("$_ptflame_bin" --help 2>/dev/null |
			sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p') --help --version" -- "$cur")
		return 0
	fi
	[ "$cmd" = help ] && {
		mapfile -t COMPREPLY < <(compgen -W "$("$_ptflame_bin" --help 2>/dev/null |
			sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')" -- "$cur")
		return 0
	}
	# the argument of the previous option, as its help line names it
	if [[ $prev == -* ]]; then
		arg=$(_ptflame_help "$cmd" $emulate |
			sed -n "s/^ *\(-[a-zA-Z], \)\{0,1\}\(--[a-z-]*, \)\{0,1\}\(-[a-zA-Z], \)\{0,1\}$(printf '%s' "$prev" | sed 's/[.[\*^$/]/\\&/g')[ =]\([A-Za-z|,.[\-]*\).*/\4/p" | head -n 1)
		case $prev in
		--sort) mapfile -t COMPREPLY < <(compgen -W "total self avg p99 calls" -- "$cur"); return 0 ;;
		--input-format) mapfile -t COMPREPLY < <(compgen -W "auto perf perf-script" -- "$cur"); return 0 ;;
		--format) mapfile -t COMPREPLY < <(compgen -W "text csv json" -- "$cur"); return 0 ;;
		esac
		case $arg in
		FILE*) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return 0 ;;
		DIR*) mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return 0 ;;
		?*) return 0 ;;   # a number, a name: nothing to offer
		esac
	fi
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$(_ptflame_help "$cmd" $emulate |
			grep -oE '(^|[ ,])--?[a-zA-Z][a-zA-Z0-9-]*' | tr -d ' ,' | sort -u)" -- "$cur")
		return 0
	fi
	# plain arguments: input files
	mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}
complete -o filenames -o bashdefault -F _ptflame ptflame
