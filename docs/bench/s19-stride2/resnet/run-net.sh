#!/usr/bin/env bash
# Session 19: ResNet-50's 23 conv keys tuned and benched exactly as in session 18 (24 trials, seed 1,
# 1 then 2 threads, s14's new5 model while tuning, the shipped model back for the bench).
set -euo pipefail
OUT=/work/s19/net bash /work/main/docs/bench/s18-ranking/resnet/run-net.sh
