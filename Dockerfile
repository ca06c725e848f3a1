# sidescope: the debugging sidecar image.
#
#   podman build -t sidescope .        (or: docker build -t sidescope .)
#
# Stage "build" compiles everything (BPF objects, skeletons, the sidescope
# binary) with the build dependencies from scripts/install-deps; the runtime
# stage carries sidescope, the wrapper scripts (timeline-capture among them,
# installed by 'make install'), busybox, lttng-tools, babeltrace2 and the
# shared libraries (liblttng-ctl0 for 'sidescope timeline --lttng'): no
# compiler, no kernel headers.
#
# Default command: idle until SIGTERM (use it with 'kubectl exec'); with
# SIDESCOPE_SCHEDULE set, periodic capture instead (see capture-loop -h).
# Either way it first starts lttng-sessiond when the app's LTTng directory
# is mounted at /run/lttng-apps, so that the LTTng agents of an app started
# after the sidecar (Python, Java: in the app's image, not this one) find
# it.

FROM docker.io/library/debian:bookworm AS build
ENV DEBIAN_FRONTEND=noninteractive
COPY scripts/install-deps /tmp/install-deps
RUN sh /tmp/install-deps --build-only
WORKDIR /src
COPY . .
RUN make -j"$(nproc)" && make install PREFIX=/usr/local DESTDIR=/install

FROM docker.io/library/debian:bookworm-slim
ENV DEBIAN_FRONTEND=noninteractive
COPY scripts/install-deps /tmp/install-deps
RUN sh /tmp/install-deps --runtime-only \
    && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/debconf/*-old \
       /usr/share/doc/* /usr/share/man/* /tmp/install-deps
COPY --from=build /install/usr/local/ /usr/local/
ENV SIDESCOPE_OUT=/out
# The sidecar's own temporary files and state (cron job, push queue) go in
# a directory no other container can reach: the podspecs mount an emptyDir
# of the sidecar's alone at /run. The scripts refuse a TMPDIR that another
# container mounts, since the app can write every shared emptyDir.
ENV TMPDIR=/run/sidescope/tmp
RUN mkdir -p /out
WORKDIR /out
LABEL org.opencontainers.image.title="sidescope" \
      org.opencontainers.image.description="Debugging sidecar: eBPF CPU profiles, LTTng, uprobes"
CMD ["capture-loop", "--sidecar"]
