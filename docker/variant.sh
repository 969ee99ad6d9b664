#!/bin/sh
# termsearch-variant cpu|gpu: for gpu, swap the CPU builds of ONNX Runtime and FAISS in the
# current environment for their CUDA builds (same Python modules, so uninstall first). The CUDA
# runtime libraries come as pip packages: the host needs only the NVIDIA driver and container toolkit.
set -eu
case "${1:-cpu}" in
    cpu) ;;
    gpu)
        pip uninstall --yes onnxruntime faiss-cpu
        pip install --no-cache-dir "onnxruntime-gpu[cuda,cudnn]>=1.20,<2" "faiss-gpu>=1.12,<2"
        ;;
    *) echo "VARIANT must be cpu or gpu, not '$1'" >&2; exit 2 ;;
esac
