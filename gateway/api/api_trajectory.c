/* gateway/api/api_trajectory.c: GET /v1/sessions/{id}/trajectory, the
 * session's trajectory as a tar (docs/trajectory.md). The archive is a
 * snapshot taken now (lines copied, images referenced), sent chunk by
 * chunk from the writeable callback: the loop never builds it whole. */
#include "gateway/action/trajectory.h"
#include "gateway/api/api_int.h"
#include "gateway/session/session.h"

void api_trajectory(struct http_req *r)
{
	struct sess *s = api_route_session(r);
	struct traj_archive *a;

	if (!s)
		return;
	if (!trajectory_enabled(r->gw)) {
		http_reply_error(r, 404, "trajectory_off",
				 "this gateway keeps no trajectories (--trajectory-max-steps 0)");
		return;
	}
	if (!(a = trajectory_archive(s))) {
		http_reply_error(r, 500, "internal", "out of memory for the trajectory");
		return;
	}
	http_add_header(r, "content-disposition", "attachment; filename=\"trajectory.tar\"");
	http_reply_stream(r, 200, "application/x-tar", traj_archive_size(a), traj_archive_read,
			  traj_archive_free, a);
}
