# A small static image of kubectl-microservice for the operator Deployment (`manifests`).
# Build: docker build -t ghcr.io/platform-example/kubectl-microservice:0.1.0 .
FROM rust:1.95-alpine AS build
RUN apk add --no-cache musl-dev gcc
WORKDIR /src
COPY . .
RUN cargo build --release --locked --bin kubectl-microservice

# distroless/static: no shell, no package manager; runs as uid 65532 (nonroot).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /src/target/release/kubectl-microservice /usr/local/bin/kubectl-microservice
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kubectl-microservice"]
CMD ["operate"]
