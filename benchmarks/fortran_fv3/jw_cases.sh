#!/usr/bin/env bash
# FV3's Jablonowski & Williamson (2006) baroclinic wave (test_case = 13) and its steady state
# (test_case = 12) on the 3-D core (fv3_hydro.x, DYCORE=hydrostatic build.sh; hydrostatic, or
# non-hydrostatic where a row's 11th column HYDROSTATIC is .false.: the jwnh_ runs, which also write w, delz):
# adiabatic, no physics, no Rayleigh friction, FV3's set_eta levels for npz (26: the JW table).
# One namelist template; each run differs only in the keys its row below sets (resolution,
# n_split, dt_atmos, length, output interval, consv_te, checker_tr: FV3's checkerboard in
# every tracer, here the passive sphum; npz, test_case).  Each run <run> has a companion
# <run>/t0: the same with days = 0 and an end-of-run
# diag file "atmos_t0" with every dynamic field (the fv_diag call at t = 0 that build.sh adds to
# the solo driver writes them), whose RESTART/ holds the t = 0 restart (D-grid u, v).
# Writes CASES_DIR/<run>/ (and <run>/t0/) and, unless --inputs-only, runs each with run.sh into
# RUNS_DIR/<run>/ (and <run>/t0/).
# Usage: jw_cases.sh [--inputs-only] [--row "RUN NPX N_SPLIT DT_ATMOS DAYS OUT_HOURS CONSV_TE
#                    CHECKER_TR NPZ TEST_CASE [HYDROSTATIC [A_IMP]]"] [RUN ...]    (default: jw_C24_L26 jw_C48_L26)
#   --row adds a run of that name with those columns of RUN_TABLE (below) and runs only it and
#   the RUNs named (stratoflow bench fv3 --case baroclinic writes its case this way)
# Env: FV3_WORK_DIR (default /work/fortran_fv3_hydro), FV3_EXE (default FV3_WORK_DIR/bin/fv3_hydro.x)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK_DIR="${FV3_WORK_DIR:-/work/fortran_fv3_hydro}"
CASES_DIR="${CASES_DIR:-${WORK_DIR}/cases}"
RUNS_DIR="${RUNS_DIR:-${WORK_DIR}/runs}"
export FV3_EXE="${FV3_EXE:-${WORK_DIR}/bin/fv3_hydro.x}"

#        run                  npx n_split dt_atmos days out_hours consv_te checker_tr npz test_case [hydrostatic, .true.] [a_imp, FV3's 0.75]
RUN_TABLE=(
    "jw_C24_L26               25  4       3600     1    6         0.       .F.  26  13"
    "jw_C24_L26_consv_te      25  4       3600     1    6         1.       .F.  26  13"
    "jw_C48_L26               49  4       1800     10   24        0.       .F.  26  13"
    "jw_C24_L26_checker       25  4       3600     10   24        0.       .T.  26  13"
    "jw_C48_L26_checker       49  4       1800     10   24        0.       .T.  26  13"
    "jw_C96_L26_checker       97  8       1800     1    24        0.       .T.  26  13"
    "jws_C24_L30              25  4       3600     30   24        0.       .F.  30  12"
    "jwnh_C24_L26             25  4       3600     1    6         0.       .F.  26  13  .false."
    "jwnh_C48_L26             49  4       1800     10   24        0.       .F.  26  13  .false."
    "jwnh_C24_L26_sim1        25  4       3600     1    6         0.       .F.  26  13  .false.  1.0"
    "jwnh_C24_L26_sim3        25  4       3600     1    6         0.       .F.  26  13  .false.  -0.7"
    "jwnh_C24_L26_sim3p0      25  4       3600     1    6         0.       .F.  26  13  .false.  -1.0"
)
RUNS=(jw_C24_L26 jw_C24_L26_consv_te jw_C48_L26)

inputs_only=0
extra=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --inputs-only) inputs_only=1; shift ;;
        --row)
            if [[ $# -lt 2 ]]; then echo "jw_cases.sh: --row needs a quoted row" >&2; exit 2; fi
            read -r -a cols <<< "$2"
            if [[ "${#cols[@]}" -lt 10 || "${#cols[@]}" -gt 12 ]]; then
                echo "jw_cases.sh: --row '$2': give 10 to 12 columns (run npx n_split dt_atmos days out_hours consv_te checker_tr npz test_case [hydrostatic [a_imp]])" >&2
                exit 2
            fi
            RUN_TABLE+=("$2")
            extra+=("${cols[0]}")
            shift 2 ;;
        --) shift; break ;;
        -*) echo "jw_cases.sh: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
if [[ $# -gt 0 || "${#extra[@]}" -gt 0 ]]; then
    RUNS=("${extra[@]}" "$@")
fi

input_nml() {  # npx n_split dt_atmos days consv_te checker_tr npz test_case hydrostatic [a_imp]
    cat <<EOF
 &diag_manager_nml
    prepend_date = .F.
/

 &fms_affinity_nml
    affinity = .false.
/

 &fms_io_nml
       checksum_required   = .false.
/

 &fms_nml
       clock_grain = 'ROUTINE',
       domains_stack_size = 30000000,
       print_memory_usage = .false.
/

 &fv_core_nml
       layout   = 1,1
       io_layout = 1,1
       npx      = $1
       npy      = $1
       ntiles   = 6
       npz    = $7
       grid_type = 0
       hydrostatic = $9${10:+
       a_imp = ${10}}
       fv_debug = .F.
       range_warn = .T.
       k_split = 2
       n_split = $2
       nwat = 0
       na_init = 0
       dnats = 0
       nord = 1
       d4_bg = 0.12
       dddmp = 0.0
       d2_bg = 0.
       d2_bg_k1 = 0.15
       d2_bg_k2 = 0.02
       d_ext = 0.
       tau = 0.
       consv_te = $5
       mountain = .F.
       hord_mt = 10
       hord_vt = 10
       hord_tm = 10
       hord_dp = 10
       hord_tr = 8
       kord_mt = 8
       kord_tm = -8
       kord_tr = 8
       adjust_dry_mass = .F.
       print_freq = -1
       warm_start = .F.
       do_schmidt = .false.
       adiabatic = .true.
       external_ic = .F. !COLD START
       is_ideal_case = .T.
/

 &test_case_nml
    test_case = $8
    checker_tr = $6
/

 &main_nml
       days  = $4
       hours = 0
       minutes = 0
       seconds = 0
       dt_atmos = $3
       current_time =  0,0,0,0
       atmos_nthreads = 1
       use_hyper_thread = .false.
/
EOF
}

# dynamic fields: 2-D, then 3-D
FIELDS_2D=(ps u850 v850 t850 vort850)
FIELDS_3D=(delp temp ucomp vcomp vort sphum)

diag_table() {  # title, output file name, its interval (hours; -1: end of run), hydrostatic
    echo "$1"
    echo "0 0 0 0 0 0"
    echo '"grid_spec",    -1,  "hours",  1, "days", "time",'
    echo '"atmos_static", -1,  "hours",  1, "days", "time",'
    echo "\"$2\",  $3,  \"hours\",  1, \"days\", \"time\","
    echo
    for v in grid_lon grid_lat grid_lont grid_latt area; do
        echo "\"dynamics\", \"${v}\", \"${v}\", \"grid_spec\", \"all\", .false., \"none\", 1,"
    done
    echo
    # pk is FV3's name for ak (Pa) on the half levels, bk beside it
    for v in zsurf ps_ic ua_ic va_ic pk bk hyam hybm; do
        echo "\"dynamics\", \"${v}\", \"${v}\", \"atmos_static\", \"all\", .false., \"none\", 1,"
    done
    echo
    local fields3d=("${FIELDS_3D[@]}")
    if [[ "$4" == ".false." ]]; then fields3d+=(w delz); fi
    for v in "${FIELDS_2D[@]}" "${fields3d[@]}"; do
        echo "\"dynamics\", \"${v}\", \"${v}\", \"$2\", \"all\", .false., \"none\", 1,"
    done
}

field_table() {
    # test_case 13 sets every tracer to 0 (init_case: q = 0; sphum only when not adiabatic);
    # sphum is FV3's name for tracer 1 and passive here (nwat = 0, adiabatic)
    cat <<'EOF'
 "TRACER", "atmos_mod", "sphum"
           "longname",     "specific humidity"
           "units",        "kg/kg"
           "profile_type", "fixed", "surface_value=0." /
EOF
}

for run in "${RUNS[@]}"; do
    row=""
    for r in "${RUN_TABLE[@]}"; do
        read -r name rest <<< "${r}"
        if [[ "${name}" == "${run}" ]]; then row="${rest}"; fi
    done
    if [[ -z "${row}" ]]; then
        echo "jw_cases.sh: unknown run ${run}; known: ${RUNS[*]}" >&2
        exit 2
    fi
    read -r npx n_split dt days out_hours consv_te checker_tr npz test_case hydrostatic a_imp <<< "${row}"
    hydrostatic="${hydrostatic:-.true.}"
    dir="${CASES_DIR}/${run}"
    rm -rf "${dir}"
    mkdir -p "${dir}/t0"
    input_nml "${npx}" "${n_split}" "${dt}" "${days}" "${consv_te}" "${checker_tr}" "${npz}" "${test_case}" "${hydrostatic}" "${a_imp:-}" > "${dir}/input.nml"
    diag_table "${run}" atmos_out "${out_hours}" "${hydrostatic}" > "${dir}/diag_table"
    field_table > "${dir}/field_table"
    : > "${dir}/data_table"
    input_nml "${npx}" "${n_split}" "${dt}" 0 "${consv_te}" "${checker_tr}" "${npz}" "${test_case}" "${hydrostatic}" "${a_imp:-}" > "${dir}/t0/input.nml"
    diag_table "${run}.t0" atmos_t0 -1 "${hydrostatic}" > "${dir}/t0/diag_table"
    cp "${dir}/field_table" "${dir}/data_table" "${dir}/t0/"
    echo "== ${run}: npx ${npx}, n_split ${n_split}, dt_atmos ${dt}, ${days} days, output every ${out_hours} h, consv_te ${consv_te}, checker_tr ${checker_tr}, npz ${npz}, test_case ${test_case}, hydrostatic ${hydrostatic}${a_imp:+, a_imp ${a_imp}}"
    if [[ "${inputs_only}" == "0" ]]; then
        # run.sh starts from an empty OUT_DIR: the run first, then its t0/ inside it
        "${HERE}/run.sh" "${dir}" "${RUNS_DIR}/${run}"
        "${HERE}/run.sh" "${dir}/t0" "${RUNS_DIR}/${run}/t0"
    fi
done
