# shellcheck shell=bash
# bash completion for migrate: subcommands, their options, and files or
# directories after the options that take them. Installed as
# share/bash-completion/completions/migrate (cmake --install); or source it.

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
		run | remap | analyze | check-rules | help)
			cmd="${COMP_WORDS[i]}"
			break
			;;
		-*) ;;
		*) break ;;
		esac
	done

	# option values: files, directories or a word list
	case "$prev" in
	--rules | --commit-map | --ref-map | --export-marks | --report | --report-json | -o | --output | --json | --strip-blobs-with-ids | --replace-message)
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return 0
		;;
	--store | --source-repo | --target-repo | --repo | --to | --lfs-objects)
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

	local words
	case "$cmd" in
	"")
		words="run remap analyze check-rules help --rules --strip-blobs-with-ids --replace-message --store --commit-map
			--commit-map-format --ref-map --export-marks --source-repo
			--target-repo --verify-split --dry-run --output --report
			--report-json --progress --no-rewrite-message-ids
			--rewrite-message-ids --date-format --object-reader --threads --lfs-objects
			--missing --quiet --help --version"
		;;
	run)
		words="--rules --strip-blobs-with-ids --replace-message --repo --to --in-place --commit-map-format --commit-map --ref-map --dry-run --report --report-json --progress
			--verify-only --rollback --verify-split --rewrite-message-ids --no-rewrite-message-ids --object-reader --threads --quiet
			--lfs-objects --missing --help"
		;;
	remap)
		words="--commit-map --no-rewrite-message-ids --help"
		;;
	analyze)
		words="--repo --rules --strip-blobs-with-ids --json --top --quiet --help"
		;;
	check-rules)
		if [[ "$cur" != -* ]]; then
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			return 0
		fi
		words="--rules --help"
		;;
	help)
		words="run remap analyze check-rules"
		;;
	esac
	mapfile -t COMPREPLY < <(compgen -W "$words" -- "$cur")
	return 0
}
complete -o filenames -F _migrate migrate
