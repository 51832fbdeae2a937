#!/usr/bin/env bash
# The Fortran FV3 runs beyond ../shared/fv3-reference: each is tc2_C24_d1's input.nml with only
# the stated keys changed and tc2_C24_d1's diag_table, field_table and data_table.  Each run
# <run> has a companion <run>/t0: the same with days = 0 and a diag_table file "atmos_t0"
# (ps, ucomp, vcomp, vort at the end of the run = t = 0), which needs the fv_diag call at t = 0
# that build.sh adds to the solo driver: the netCDF output has no vorticity at t = 0 otherwise,
# and the enstrophy norms need it (README.md).
# Writes CASES_DIR/<run>/ (and <run>/t0/) and, unless --inputs-only, runs each with run.sh into
# RUNS_DIR/<run>/ (and <run>/t0/).
# Usage: cases.sh [--inputs-only] [RUN ...]    (default: every run below)
# Env: FV3_REFERENCE (default /work/shared/fv3-reference), FV3_WORK_DIR (default /work/fortran_fv3)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REFERENCE="${FV3_REFERENCE:-/work/shared/fv3-reference}"
WORK_DIR="${FV3_WORK_DIR:-/work/fortran_fv3}"
CASES_DIR="${CASES_DIR:-${WORK_DIR}/cases}"
RUNS_DIR="${RUNS_DIR:-${WORK_DIR}/runs}"
BASE="${REFERENCE}/tc2_C24_d1"

# tc2_C24_d1: the reference run itself, namelist unchanged (its output must equal the
# reference's bit for bit, and its t = 0 companion give the reference's printed t = 0 norms)
RUNS=(tc2_C24_d1 tc1_C24_d1 tc5_C24_d1 tc6_C24_d1 tc7_C24_d1 tc2_C24_d1_hord10 tc2_C24_d1_hord6
      tc2_C24_d1_hord5 tc2_C24_d1_vort_damp tc2_C24_d1_nord1_smag tc2_C24_d1_beta)

inputs_only=0
if [[ "${1:-}" == "--inputs-only" ]]; then
    inputs_only=1
    shift
fi
if [[ $# -gt 0 ]]; then
    RUNS=("$@")
fi

edit() {  # file, sed expression: fails unless the expression changed the file
    local file="$1" expr="$2" before
    before="$(cat "${file}")"
    sed -i -e "${expr}" "${file}"
    if [[ "$(cat "${file}")" == "${before}" ]]; then
        echo "cases.sh: '${expr}' changed nothing in ${file}" >&2
        exit 1
    fi
}

namelist() {  # run name, input.nml to edit
    local run="$1" nml="$2" h
    case "${run}" in
        tc2_C24_d1) ;;
        tc1_C24_d1) edit "${nml}" 's/^    test_case = 2$/    test_case = 1/' ;;
        tc5_C24_d1) edit "${nml}" 's/^    test_case = 2$/    test_case = 5/' ;;
        tc6_C24_d1) edit "${nml}" 's/^    test_case = 2$/    test_case = 6/' ;;
        tc7_C24_d1) edit "${nml}" 's/^    test_case = 2$/    test_case = 7/' ;;
        tc2_C24_d1_hord10 | tc2_C24_d1_hord6 | tc2_C24_d1_hord5)
            h="${run##*_hord}"
            for key in hord_mt hord_vt hord_tm hord_dp hord_tr; do
                edit "${nml}" "s/^       ${key} = 8$/       ${key} = ${h}/"
            done ;;
        tc2_C24_d1_vort_damp)
            edit "${nml}" 's/^       d4_bg = 0.12$/       d4_bg = 0.12\n       do_vort_damp = .true.\n       vtdm4 = 0.06/' ;;
        tc2_C24_d1_nord1_smag)
            edit "${nml}" 's/^       nord = 2$/       nord = 1/'
            edit "${nml}" 's/^       dddmp = 0.0$/       dddmp = 0.2/'
            edit "${nml}" 's/^       d2_bg = 0.$/       d2_bg = 0.005/' ;;
        tc2_C24_d1_beta) edit "${nml}" 's/^       beta = 0.$/       beta = 0.3/' ;;
        *) echo "cases.sh: unknown run ${run}; known: ${RUNS[*]}" >&2; exit 2 ;;
    esac
}

for run in "${RUNS[@]}"; do
    dir="${CASES_DIR}/${run}"
    rm -rf "${dir}"
    mkdir -p "${dir}/t0"
    cp "${BASE}/input.nml" "${BASE}/diag_table" "${BASE}/field_table" "${BASE}/data_table" \
        "${dir}/"
    chmod u+w "${dir}"/*
    namelist "${run}" "${dir}/input.nml"
    echo "== ${run}: $(diff "${BASE}/input.nml" "${dir}/input.nml" | grep '^>' | tr -s ' ' | tr '\n' ';')"
    # the t = 0 companion
    cp "${dir}/input.nml" "${dir}/field_table" "${dir}/data_table" "${dir}/t0/"
    edit "${dir}/t0/input.nml" 's/^       days  = 1$/       days  = 0/'
    {
        head -n 5 "${BASE}/diag_table"
        echo '"atmos_t0",  -1,  "hours",  1, "days", "time",'
        tail -n +6 "${BASE}/diag_table"
        echo
        for v in ps ucomp vcomp vort; do
            echo "\"dynamics\", \"${v}\", \"${v}\", \"atmos_t0\", \"all\", .false., \"none\", 1,"
        done
    } > "${dir}/t0/diag_table"
    if [[ "${inputs_only}" == "0" ]]; then
        "${HERE}/run.sh" "${dir}" "${RUNS_DIR}/${run}"
        "${HERE}/run.sh" "${dir}/t0" "${RUNS_DIR}/${run}/t0"
    fi
done
