#!/bin/sh
# awslocal for Retsu: the AWS CLI pointed at the Retsu server, as
# LocalStack's awslocal points it at LocalStack. Retsu puts this file first
# on the PATH of the init hooks it runs (RETSU_ENDPOINT names the server);
# copied elsewhere it reaches http://localhost:4566 unless RETSU_ENDPOINT
# or AWS_ENDPOINT_URL says otherwise. Retsu checks no credentials unless
# started with --auth, but the CLI wants some: dummy ones when none are set.
endpoint="${RETSU_ENDPOINT:-${AWS_ENDPOINT_URL:-http://localhost:4566}}"
if [ -z "${AWS_ACCESS_KEY_ID:-}" ] && [ -z "${AWS_PROFILE:-}" ]; then
  export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
fi
if [ -z "${AWS_DEFAULT_REGION:-}" ] && [ -z "${AWS_REGION:-}" ]; then
  export AWS_DEFAULT_REGION="${RETSU_REGION:-us-east-1}"
fi
exec aws --endpoint-url "$endpoint" "$@"
