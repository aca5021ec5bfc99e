-- The demo's QPU plugin: the pre-run hands each job a token, and the
-- maintenance takes qpu2 out for calibration for 20 s of every minute, so
-- the console's HRES pane shows a layer a plugin disabled, live.

function hres_create_context(ctx, layers)
  slurm.log_info("%s: %d QPU layers", ctx.name, #layers)
  return slurm.SUCCESS
end

function hres_destroy_context(ctx)
end

function hres_maintenance(ctx, layers)
  local calibrating = os.time() % 60 < 20
  for _, l in ipairs(layers) do
    if l.name == "qpu2" then l.disable_layer = calibrating end
  end
  if calibrating then slurm.user_msg("qpu2 calibrating") else slurm.user_msg("all QPUs in service") end
  return slurm.SUCCESS
end

function hres_validate_args(ctx, args)
  if args.mode and args.mode ~= "fast" and args.mode ~= "exact" then
    slurm.user_msg("mode=%s: use fast or exact", args.mode)
    return slurm.ERROR
  end
  return slurm.SUCCESS
end

function hres_controller_job_prerun(ctx, job, prep)
  return slurm.SUCCESS, "token=" .. job.job_id
end

function hres_controller_job_revoke(ctx, job, prep) end
function hres_controller_job_epilog(ctx, job, prep) end
function hres_node_job_prolog(prep, job) end
function hres_node_job_epilog(prep, job) end
function hres_node_task_prolog(prep, job, node_tid, global_tid, env) end
function hres_node_user_task_prolog(prep, job, node_tid, global_tid, env) end
function hres_node_task_epilog(prep, job, node_tid, global_tid, env) end
