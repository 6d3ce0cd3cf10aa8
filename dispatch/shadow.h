/* The entry api/ hands every built-in call to: shadow mode as a compare step
 * around the primary dispatch (dispatch.h), which knows nothing of it. */
#ifndef XPAR_DISPATCH_SHADOW_H
#define XPAR_DISPATCH_SHADOW_H

#include "dispatch.h"

/** The call on its primary tier, then on ctx->shadow_tier, compared (shadow.c). */
xpar_status xpar__dispatch_shadowed(xpar_context *ctx, const xpar__call *call);

/** Decide where the call runs, move what must move, run it, record why.
 *  With shadow mode on (shadow.c) the call also runs on the shadow tier and
 *  the two results are compared; off, that costs one branch. */
static inline xpar_status xpar__dispatch(xpar_context *ctx, const xpar__call *call) {
  if (ctx->shadow_tier != XPAR_TIER_NONE) return xpar__dispatch_shadowed(ctx, call);
  return xpar__dispatch_primary(ctx, call);
}

#endif
