# bash completion for gpufilt: options (read from `gpufilt --help`, so they
# follow the installed version), their fixed values, and files.
_gpufilt()
{
    local cur prev
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    case $prev in
    -d | --device) mapfile -t COMPREPLY < <(compgen -W "auto cpu cuda ref" -- "$cur") && return ;;
    --method) mapfile -t COMPREPLY < <(compgen -W "auto direct fft nupc" -- "$cur") && return ;;
    -m | --mode) mapfile -t COMPREPLY < <(compgen -W "same causal full" -- "$cur") && return ;;
    -p | --precision) mapfile -t COMPREPLY < <(compgen -W "f32 f64" -- "$cur") && return ;;
    --phase) mapfile -t COMPREPLY < <(compgen -W "linear minimum" -- "$cur") && return ;;
    --dither) mapfile -t COMPREPLY < <(compgen -W "none tpdf shaped" -- "$cur") && return ;;
    --ir-rate) mapfile -t COMPREPLY < <(compgen -W "resample strict" -- "$cur") && return ;;
    --latency) mapfile -t COMPREPLY < <(compgen -W "block zero auto" -- "$cur") && return ;;
    --hist-of) mapfile -t COMPREPLY < <(compgen -W "output input" -- "$cur") && return ;;
    --hist-channels) mapfile -t COMPREPLY < <(compgen -W "each mix" -- "$cur") && return ;;
    --normalize-filter) mapfile -t COMPREPLY < <(compgen -W "peak dc l1 l2" -- "$cur") && return ;;
    --normalize-by) mapfile -t COMPREPLY < <(compgen -W "peak rms" -- "$cur") && return ;;
    --raw | --out-raw)
        mapfile -t COMPREPLY < <(compgen -W "u8 s8 s16le s16be s24le s32le f32le f64le" -- "$cur")
        return
        ;;
    --out-format)
        mapfile -t COMPREPLY < <(compgen -W "wav aiff au flac ogg caf w64 rf64 \
            wav:pcm_16 wav:pcm_24 wav:pcm_32 wav:float wav:double flac:pcm_16 flac:pcm_24 \
            ogg:vorbis ogg:opus" -- "$cur")
        return
        ;;
    --gpus)
        mapfile -t COMPREPLY < <(compgen -W "all 0 1 0,1" -- "$cur")
        return
        ;;
    -t | --taps | -c | --channels | -r | --rate | --chunk | --threads | --partition | \
        --hist-bins | --hist-block | --hist-range | --frames | --duration | --in | --out | \
        --host-api | --lowpass | --highpass | --bandpass | --bandreject | --atten | \
        --transition | --design-taps | --gain | --mix | --dry | --wet | --normalize | --seed | \
        --crossfade)
        return # a number or a name: nothing to offer
        ;;
    esac
    if [[ $cur == -* ]]; then
        local opts
        opts=$("${COMP_WORDS[0]}" --help 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
        mapfile -t COMPREPLY < <(compgen -W "$opts -" -- "$cur")
        return
    fi
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    compopt -o filenames 2>/dev/null
}
complete -F _gpufilt gpufilt
