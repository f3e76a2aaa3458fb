#!/usr/bin/env bash
# usage: run.sh <build dir> <consumer source dir> <scratch dir>
set -euo pipefail
build=$1 src=$2 scratch=$3
rm -rf "$scratch"
mkdir -p "$scratch"
prefix=$scratch/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/gshmem.h include/gshmem/host.h bin/gshmemrun bin/gshmem-info; do
  [ -e "$prefix/$f" ] || { echo "install_consumer: $f was not installed" >&2; exit 1; }
done
libdir=$(dirname "$(find "$prefix" -name libgshmem.so -print -quit)")
[ -e "$libdir/libgshmem.a" ] || { echo "install_consumer: static libgshmem.a missing" >&2; exit 1; }

# 1. CMake package.
cmake -S "$src" -B "$scratch/cmake-build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$scratch/cmake-build" >/dev/null
# 2. pkg-config.
export PKG_CONFIG_PATH=$libdir/pkgconfig
# As the README writes it: the rpath from the .pc file's libdir (Libs has none: nvcc
# users take the same flags and nvcc refuses -Wl,...).
cc -std=c11 -Wall -Wextra -Werror "$src/consumer.c" $(pkg-config --cflags --libs gshmem) \
   -Wl,-rpath,"$(pkg-config --variable=libdir gshmem)" -o "$scratch/consumer-pc"
# 3. By hand with nvcc, as the README shows it.
if command -v nvcc >/dev/null && [ -e "$libdir/libgshmem_device.a" ]; then
  P=$prefix
  # the first architecture the device library was built for (gshmemConfig.cmake says)
  arch=$(sed -n 's/.*set(GSHMEM_CUDA_ARCHITECTURES "\([0-9]*\).*/\1/p' "$libdir/cmake/gshmem/gshmemConfig.cmake")
  nvcc -arch=sm_${arch:-90} -rdc=true "$src/consumer_device.cu" -I"$P/include" -L"$libdir" -lgshmem_device -lgshmem \
       -Xlinker -rpath,"$libdir" -o "$scratch/consumer-device-nvcc"
  out=$(env -u LD_LIBRARY_PATH "$prefix/bin/gshmemrun" -n 2 "$scratch/consumer-device-nvcc")
  grep -q "consumer-device" <<<"$out" || { echo "install_consumer: consumer-device-nvcc printed nothing" >&2; exit 1; }
  echo "install_consumer: device-API consumer built by hand with nvcc"
fi

for exe in "$scratch/cmake-build/consumer" "$scratch/cmake-build/consumer-static" "$scratch/consumer-pc"; do
  out=$(env -u LD_LIBRARY_PATH "$prefix/bin/gshmemrun" -n 3 "$exe")
  for pe in 0 1 2; do
    grep -q "consumer: PE $pe of 3 ok" <<<"$out" || { echo "install_consumer: $exe: PE $pe missing in:"; echo "$out"; exit 1; } >&2
  done
done
if [ -e "$scratch/cmake-build/consumer-device" ]; then
  out=$("$prefix/bin/gshmemrun" -n 2 "$scratch/cmake-build/consumer-device")
  grep -q "consumer-device" <<<"$out" || { echo "install_consumer: consumer-device printed nothing" >&2; exit 1; }
  echo "install_consumer: device-API consumer built with gshmem_enable_device"
fi
"$prefix/bin/gshmem-info" | grep "GSHMEM_SYMMETRIC_SIZE" >/dev/null # no -q: gshmem-info must not die of SIGPIPE
echo "install_consumer: find_package (shared and static) and pkg-config consumers ran on 3 PEs"
