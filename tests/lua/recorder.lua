-- hres/lua test script: every function appends one line to the file named
-- by the plugin config `log`, and the job's plugin arguments pick failures:
-- fail=prerun|remote|slow|prolog|prolog_remote|epilog|task; async=yes adds a
-- payload from the async pre-run. Maintenance reads the file named by
-- `maint` ("disable LAYER", "down LAYER" or nothing: every layer enabled).
-- The tests append ASYNC (below) for an asynchronous pre-run.

local function log(config, line)
  local f = io.open(config.log, "a")
  if f then f:write(line .. "\n"); f:close() end
end

local function args_of(t)
  local keys = {}
  for k, v in pairs(t) do keys[#keys + 1] = k .. "=" .. v end
  table.sort(keys)
  return table.concat(keys, ",")
end

local function layers_of(prep)
  local out = {}
  for _, l in ipairs(prep.layers) do out[#out + 1] = l.name .. "*" .. l.count .. "@" .. l.nodes end
  return table.concat(out, ";")
end

function hres_create_context(ctx, layers)
  local names = {}
  for _, l in ipairs(layers) do names[#names + 1] = l.name .. ":" .. l.used .. "/" .. l.total end
  log(ctx.config, "create_context " .. ctx.name .. " " .. table.concat(names, ","))
  return slurm.SUCCESS
end

function hres_destroy_context(ctx)
  log(ctx.config, "destroy_context " .. ctx.name)
end

function hres_maintenance(ctx, layers)
  local f = io.open(ctx.config.maint or "", "r")
  local want = f and f:read("l") or ""
  if f then f:close() end
  local verb, which = want:match("^(%a+) (%S+)")
  for _, l in ipairs(layers) do
    l.disable_layer = false
    if l.name == which and verb == "disable" then l.disable_layer = true end
    if l.name == which and verb == "down" then l.down = true end
  end
  log(ctx.config, "maintenance " .. ctx.name .. " " .. want)
  slurm.user_msg("maintenance saw '%s'", want)
  return slurm.SUCCESS
end

function hres_validate_args(ctx, args)
  log(ctx.config, "validate_args " .. ctx.name .. " " .. args_of(args))
  if args.bad then
    slurm.user_msg("argument bad=%s is not allowed", args.bad)
    return slurm.ERROR
  end
  return slurm.SUCCESS
end

function hres_controller_job_prerun(ctx, job, prep)
  local fail = prep.plugin_args.fail
  log(ctx.config, "prerun " .. ctx.name .. " job=" .. job.job_id .. " sluid=" .. job.sluid .. " user=" ..
    job.user_id .. " part=" .. job.partition .. " nodes=" .. job.nodes .. " end=" .. job.end_time ..
    " args=" .. args_of(prep.plugin_args) .. " layers=" .. layers_of(prep))
  if fail == "slow" then while true do end end
  if fail == "prerun" then
    slurm.user_msg("the service refused job %d", job.job_id)
    return slurm.ERROR
  end
  if fail == "remote" then return slurm.ESLURM_HRES_REMOTE_FAIL end
  return slurm.SUCCESS, "token=" .. job.job_id
end

function hres_controller_job_revoke(ctx, job, prep)
  log(ctx.config, "revoke " .. ctx.name .. " job=" .. job.job_id .. " async_running=" .. tostring(prep.async_running))
end

function hres_controller_job_epilog(ctx, job, prep)
  log(ctx.config, "controller_epilog " .. ctx.name .. " job=" .. job.job_id .. " payload=" .. (prep.payload or "") ..
    " async_running=" .. tostring(prep.async_running))
end

function hres_node_job_prolog(prep, job)
  log(prep.config, "job_prolog " .. prep.name .. " job=" .. job.job_id .. " payload=" .. (prep.payload or ""))
  if prep.plugin_args.fail == "prolog" then return slurm.ERROR end
  if prep.plugin_args.fail == "prolog_remote" then return slurm.ESLURM_HRES_REMOTE_FAIL end
end

function hres_node_job_epilog(prep, job)
  log(prep.config, "job_epilog " .. prep.name .. " job=" .. job.job_id)
  if prep.plugin_args.fail == "epilog" then return slurm.ERROR end
end

function hres_node_task_prolog(prep, job, node_tid, global_tid, env)
  log(prep.config, "task_prolog " .. prep.name .. " job=" .. job.job_id .. " tid=" .. node_tid .. "/" .. global_tid ..
    " prep_env=" .. tostring(env.SPUR_HRES_PREP ~= nil))
  if prep.plugin_args.fail == "task" then return slurm.ERROR end
end

function hres_node_user_task_prolog(prep, job, node_tid, global_tid, env)
  log(prep.config, "user_task_prolog " .. prep.name .. " job=" .. job.job_id .. " tid=" .. node_tid .. "/" .. global_tid)
  io.write("user task prolog of " .. prep.name .. "\n")
  io.stdout:flush()
end

function hres_node_task_epilog(prep, job, node_tid, global_tid, env)
  log(prep.config, "task_epilog " .. prep.name .. " job=" .. job.job_id .. " tid=" .. node_tid .. "/" .. global_tid)
end
