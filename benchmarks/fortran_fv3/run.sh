#!/usr/bin/env bash
# Run the Fortran FV3 solo model built by build.sh (fv3_sw.x; FV3_EXE=.../fv3_hydro.x for the 3-D core) on one case folder.
# Usage: run.sh CASE_DIR OUT_DIR [RANKS]
#   CASE_DIR holds input.nml, diag_table, field_table (data_table optional, empty if absent);
#   OUT_DIR receives a copy of them, stdout.txt and the model's netCDF output (*.tile1..6.nc).
# Env: FV3_EXE (default /work/fortran_fv3/bin/fv3_sw.x), MPIRUN (default mpirun),
#      MPIRUN_FLAGS (default: --allow-run-as-root --oversubscribe when run as root).
set -euo pipefail

if [[ $# -lt 2 ]]; then
    echo "usage: $0 CASE_DIR OUT_DIR [RANKS]" >&2
    exit 2
fi
CASE_DIR="$(cd "$1" && pwd)"
OUT_DIR="$2"
RANKS="${3:-6}"
FV3_EXE="${FV3_EXE:-/work/fortran_fv3/bin/fv3_sw.x}"
MPIRUN="${MPIRUN:-mpirun}"
if [[ -z "${MPIRUN_FLAGS+x}" ]]; then
    if [[ "$(id -u)" == "0" ]]; then
        MPIRUN_FLAGS="--allow-run-as-root --oversubscribe"
    else
        MPIRUN_FLAGS="--oversubscribe"
    fi
fi

for f in input.nml diag_table field_table; do
    if [[ ! -f "${CASE_DIR}/${f}" ]]; then
        echo "${CASE_DIR}/${f} is missing" >&2
        exit 2
    fi
done
if [[ ! -x "${FV3_EXE}" ]]; then
    echo "${FV3_EXE} is not an executable: build it with build.sh" >&2
    exit 2
fi

rm -rf "${OUT_DIR}"
mkdir -p "${OUT_DIR}/INPUT" "${OUT_DIR}/RESTART"
cp "${CASE_DIR}/input.nml" "${CASE_DIR}/diag_table" "${CASE_DIR}/field_table" "${OUT_DIR}/"
if [[ -f "${CASE_DIR}/data_table" ]]; then
    cp "${CASE_DIR}/data_table" "${OUT_DIR}/"
else
    : > "${OUT_DIR}/data_table"
fi

cd "${OUT_DIR}"
start=$(date +%s%N)
# shellcheck disable=SC2086  # MPIRUN_FLAGS is a list of flags
OMP_NUM_THREADS=1 "${MPIRUN}" ${MPIRUN_FLAGS} -np "${RANKS}" "${FV3_EXE}" > stdout.txt 2> stderr.txt
end=$(date +%s%N)
{
    echo "command=${MPIRUN} ${MPIRUN_FLAGS} -np ${RANKS} ${FV3_EXE} (OMP_NUM_THREADS=1, in ${OUT_DIR})"
    echo "case_dir=${CASE_DIR}"
    echo "wall_ms=$(( (end - start) / 1000000 ))"
    if [[ -f "${FV3_EXE}.provenance" ]]; then
        cat "${FV3_EXE}.provenance"
    fi
} > provenance.txt
echo "${CASE_DIR##*/}: ${RANKS} ranks, $(( (end - start) / 1000000 )) ms wall"
