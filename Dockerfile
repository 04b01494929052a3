# Retsu in a container: one statically linked binary in an empty image
# (about 12.5 MB), running as a non-root user.
#
#   docker build -t retsu .
#   docker run --rm -p 9324:9324 retsu
#   docker run --rm -p 9324:9324 -v ./retsu.toml:/etc/retsu/retsu.toml:ro \
#       -e RETSU_CONFIG=/etc/retsu/retsu.toml retsu
#
# Stages:
#   build     compiles the binary in the official Rust image for the
#             platform being built, amd64 or arm64 (glibc, statically linked
#             with +crt-static):
#               docker buildx build --platform linux/amd64,linux/arm64 -t retsu .
#   prebuilt  takes a binary built outside instead, from docker/prebuilt/ in
#             the build context: the static binary as `retsu` and an empty
#             `data/` (scripts/docker-check.sh builds this way, since CI has
#             no registry to pull the Rust image from):
#               scripts/build-static.sh x86_64-unknown-linux-gnu
#               cp target/x86_64-unknown-linux-gnu/release/retsu docker/prebuilt/
#               mkdir -p docker/prebuilt/data
#               podman build --format docker --build-arg BINARY=prebuilt .
#   runtime   FROM scratch, from whichever of the two BINARY names (default
#             build). The last stage, so it is what a plain build produces.
#             (A builder that runs every stage, like Docker's legacy one,
#             still works: the unused one copies a nearly empty folder.)

ARG BINARY=build

FROM docker.io/library/rust:1-bookworm AS build
# The build stage runs on the platform being built (natively on an arm64
# machine, emulated under buildx --platform otherwise), so the Rust target
# is that platform's own glibc one. TARGETARCH comes from BuildKit; the
# legacy builder leaves it empty and the machine's own architecture is used.
ARG TARGETARCH
WORKDIR /src
COPY . .
RUN arch="${TARGETARCH:-$(dpkg --print-architecture)}" \
    && case "$arch" in \
         amd64) target=x86_64-unknown-linux-gnu ;; \
         arm64) target=aarch64-unknown-linux-gnu ;; \
         *) echo "retsu: no build for architecture $arch (amd64 and arm64 are supported)" >&2; exit 1 ;; \
       esac \
    && rustup target add "$target" \
    && scripts/build-static.sh "$target" \
    && mkdir -p /out/data \
    && cp "target/$target/release/retsu" /out/retsu

FROM scratch AS prebuilt
COPY docker/prebuilt/ /out/

FROM ${BINARY} AS binary

FROM scratch AS runtime
# /data: the data volume, owned by the user the server runs as (a fresh
# named volume takes this ownership).
COPY --from=binary --chown=65532:65532 /out/data /data
COPY --from=binary /out/retsu /retsu
# Inside a container, listen on every interface. The port is left to its
# default (9324), so that RETSU_LOCALSTACK=1 can make it LocalStack's 4566.
ENV RETSU_HOST=0.0.0.0
# No /etc/passwd in scratch: a numeric non-root user (distroless's "nonroot").
USER 65532:65532
WORKDIR /data
EXPOSE 9324 4566
VOLUME ["/data"]
# A scratch image has no curl: the binary probes its own GET /health (on
# loopback, at the port from RETSU_PORT, RETSU_LOCALSTACK or the RETSU_CONFIG
# file).
HEALTHCHECK --interval=10s --timeout=3s --start-period=2s --retries=3 \
    CMD ["/retsu", "health"]
ENTRYPOINT ["/retsu"]
