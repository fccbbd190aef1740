# Source this file (`source scripts/env.sh`) to get the pinned Deno on PATH, installing it from npm when missing,
# and to hand the machine's npm registry setting to Deno (which otherwise reads only .npmrc files).
_ccm_deno="$(bash "$(dirname "${BASH_SOURCE[0]}")/deno.sh")" || return 1 2>/dev/null || exit 1
export PATH="$(dirname "$_ccm_deno"):$PATH"
if [ -z "${NPM_CONFIG_REGISTRY:-}" ] && command -v npm >/dev/null; then
  NPM_CONFIG_REGISTRY="$(npm config get registry 2>/dev/null)" && export NPM_CONFIG_REGISTRY
fi
unset _ccm_deno
