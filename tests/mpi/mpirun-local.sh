#!/usr/bin/env bash
# Run an MPI program on this one machine, the way the tests and the bench do:
#   tests/mpi/mpirun-local.sh MPIEXEC NP PROGRAM [ARGS...]
# Any machine, container or not, root or not, more ranks than cores:
#  - Open MPI: --oversubscribe (4 ranks on 2 cores), root allowed (CI runs as
#    root), shared memory between ranks (btl self + vader/sm, pml ob1: no
#    network needed, no InfiniBand/UCX probing), the out-of-band channel on
#    loopback (containers without a routable interface), no CMA single copy
#    (ptrace is often forbidden in containers; the messages are tiny), and
#    ranks that yield while they wait (busy polling on 2 cores starves the
#    rank being waited for), and a session directory of its own: two
#    launches at once (ctest -j) race to create the shared default one
#    (/tmp/ompi.<host>.<uid>: "mkdir: File exists", orte_init fails).  A
#    variable already set in the environment wins.
#  - other MPIs (MPICH, ...): MPIEXEC -n NP as is.
# XPAR_MPIRUN_FLAGS adds launcher flags (e.g. "-x NCCL_NVLS_ENABLE=0").
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 MPIEXEC NP PROGRAM [ARGS...]" >&2; exit 2; }
mpiexec=$1 np=$2
shift 2
flags=()
version=$("$mpiexec" --version 2>&1 || true)
if [[ $version == *"Open MPI"* || $version == *"OpenRTE"* ]]; then
  major=$(sed -n 's/.*Open \{0,1\}\(MPI\|RTE\)[^0-9]*\([0-9]\+\)\..*/\2/p' <<<"$version" | head -n 1)
  flags+=(--oversubscribe)
  : "${OMPI_ALLOW_RUN_AS_ROOT:=1}" "${OMPI_ALLOW_RUN_AS_ROOT_CONFIRM:=1}"
  : "${OMPI_MCA_pml:=ob1}" "${OMPI_MCA_mpi_yield_when_idle:=1}"
  session=$(mktemp -d "${TMPDIR:-/tmp}/xpar-mpirun.XXXXXX")
  trap 'rm -rf "$session"' EXIT
  if [ "${major:-4}" -ge 5 ]; then
    : "${PRTE_MCA_prte_tmpdir_base:=$session}"
    export PRTE_MCA_prte_tmpdir_base
    : "${OMPI_MCA_btl:=self,sm}" "${OMPI_MCA_btl_sm_single_copy_mechanism:=none}"
    : "${PRTE_MCA_oob_tcp_if_include:=lo}"
    export PRTE_MCA_oob_tcp_if_include OMPI_MCA_btl_sm_single_copy_mechanism
  else
    : "${OMPI_MCA_btl:=self,vader}" "${OMPI_MCA_btl_vader_single_copy_mechanism:=none}"
    : "${OMPI_MCA_oob_tcp_if_include:=lo}" "${OMPI_MCA_orte_tmpdir_base:=$session}"
    export OMPI_MCA_oob_tcp_if_include OMPI_MCA_btl_vader_single_copy_mechanism \
      OMPI_MCA_orte_tmpdir_base
  fi
  export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_pml \
    OMPI_MCA_mpi_yield_when_idle OMPI_MCA_btl
fi
# shellcheck disable=SC2206  # XPAR_MPIRUN_FLAGS is a flag list, split on purpose
extra=(${XPAR_MPIRUN_FLAGS:-})
# Not exec: the trap removes the session directory afterwards.
"$mpiexec" -n "$np" "${flags[@]}" "${extra[@]}" "$@"
