#!/usr/bin/env bash
# session 25, call 6: which driver query classifies a pointer cheapest (issue 12, pinned operands)
set -u
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -O2 -arch=sm_90 .exp/pqv.cu -o /tmp/pqv && /tmp/pqv && /tmp/pqv | tail -6
