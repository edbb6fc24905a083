# shellcheck shell=bash
# bash completion for migrate: subcommands, their options, and files or
# directories after the options that take them. Installed as
# share/bash-completion/completions/migrate (cmake --install); or source it.

# __migrate_options [CMD]: the options of `migrate [CMD]`, as its option
# table has them: the binary says (the hidden --list-options, as git's
# --git-completion-helper: "--rules= --quiet ...", '=' after an option that
# takes a value). A binary that cannot (missing, or older than
# --list-options) gets the lists below, which
# tests/integration/options_surface.sh holds equal to the tables.
__migrate_options() {
	local out
	if out="$(command migrate ${1:+"$1"} --list-options </dev/null 2>/dev/null)" &&
		[ -n "$out" ]; then
		printf '%s\n' "$out"
		return 0
	fi
	case "$1" in
	"" | check-rules)
		echo "--rules= --strip-blobs-with-ids= --include= --exclude= --above=
			--fixup --strip-blobs-bigger-than= --path= --path-glob= --path-regex=
			--paths-from-file= --invert-paths --replace-message= --store=
			--annex-dir= --annex-uuid= --lfs-objects= --missing= --commit-map=
			--commit-map-format= --ref-map= --export-marks= --source-repo=
			--target-repo= --verify-split --dry-run --output= --report=
			--report-json= --progress --no-rewrite-message-ids
			--rewrite-message-ids --no-prune-empty --date-format= --object-reader= --threads=
			--quiet --help --version"
		;;
	run)
		echo "--repo= --to= --in-place --verify-only --rollback --restart --undo --allow-no-rules
			--include-ref= --exclude-ref= --everything --rules=
			--strip-blobs-with-ids= --include= --exclude= --above= --fixup
			--strip-blobs-bigger-than= --path= --path-glob= --path-regex=
			--paths-from-file= --invert-paths --replace-message= --lfs-objects= --missing=
			--commit-map= --commit-map-format= --ref-map= --verify-split
			--dry-run --report= --report-json= --progress
			--no-rewrite-message-ids --rewrite-message-ids --no-prune-empty
			--object-reader= --threads= --quiet --help"
		;;
	push)
		echo "--repo= --dry-run --quiet --help"
		;;
	remap)
		echo "--commit-map= --no-rewrite-message-ids --help"
		;;
	analyze)
		echo "--repo= --json= --top= --rules= --strip-blobs-with-ids= --include=
			--exclude= --above= --strip-blobs-bigger-than= --path= --path-glob=
			--path-regex= --paths-from-file= --invert-paths --quiet --help"
		;;
	esac
}

_migrate() {
	local cur prev cmd i
	COMPREPLY=()
	cur="${COMP_WORDS[COMP_CWORD]}"
	prev=""
	[ "$COMP_CWORD" -gt 0 ] && prev="${COMP_WORDS[COMP_CWORD - 1]}"

	# the subcommand: the first word after migrate that is not an option
	cmd=""
	for ((i = 1; i < COMP_CWORD; i++)); do
		case "${COMP_WORDS[i]}" in
		run | push | remap | analyze | check-rules | help)
			cmd="${COMP_WORDS[i]}"
			break
			;;
		-*) ;;
		*) break ;;
		esac
	done

	# option values: files, directories or a word list
	case "$prev" in
	--rules | --commit-map | --ref-map | --export-marks | --report | --report-json | -o | --output | --json | --strip-blobs-with-ids | --replace-message | --paths-from-file | --path)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return 0
		;;
	--store | --annex-dir | --source-repo | --target-repo | --repo | --to | --lfs-objects)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return 0
		;;
	--commit-map-format)
		mapfile -t COMPREPLY < <(compgen -W "filter-repo lfs bfg" -- "$cur")
		return 0
		;;
	--date-format)
		mapfile -t COMPREPLY < <(compgen -W "raw raw-permissive" -- "$cur")
		return 0
		;;
	--object-reader)
		mapfile -t COMPREPLY < <(compgen -W "auto git native" -- "$cur")
		return 0
		;;
	--missing)
		mapfile -t COMPREPLY < <(compgen -W "error keep" -- "$cur")
		return 0
		;;
	esac

	local words opts
	case "$cmd" in
	help)
		words="run push remap analyze check-rules"
		;;
	*)
		opts=" $(__migrate_options "$cmd") "
		opts="${opts//[$'\n\t']/ }"
		# another option that takes a value (--top N, --threads N,
		# --annex-uuid UUID): nothing to offer, option names least of all
		if [[ "$prev" == --* && "$opts" == *" $prev= "* ]]; then
			return 0
		fi
		if [ "$cmd" = check-rules ] && [[ "$cur" != -* ]]; then
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			return 0
		fi
		words="${opts//=/}"
		[ -z "$cmd" ] && words="run push remap analyze check-rules help $words"
		;;
	esac
	mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
	return 0
}
complete -o filenames -F _migrate migrate
