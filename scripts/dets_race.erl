%% What Ra's directory does to its dets table (names.dets) while quorum
%% queues come and go on a node, from several processes at once: each worker
%% registers a name (insert), looks it up, unregisters it (delete) and, with
%% select_delete, removes it once more by its id, as ra_directory:unregister_name
%% does for a member deleted twice. dets runs select_delete as a series of
%% requests; writes of the other workers come between them. Run by
%% scripts/dets-race.sh, which prints the one line this writes.
%%
%%   erl -noshell -run dets_race run FILE WORKERS ROUNDS select_delete|plain
-module(dets_race).
-export([run/1]).

run([File, Workers, Rounds, Mode]) ->
    _ = file:delete(File),
    {ok, Tab} = dets:open_file(dets_race, [{file, File}, {auto_save, 500}, {access, read_write}]),
    Parent = self(),
    N = list_to_integer(Workers),
    R = list_to_integer(Rounds),
    _ = [spawn_link(fun() -> Parent ! {self(), rounds(Tab, W, 1, R, list_to_atom(Mode))} end)
         || W <- lists:seq(1, N)],
    Failures = [F || _ <- lists:seq(1, N), F <- [receive {_, Result} -> Result end], F =/= ok],
    case Failures of
        [] -> io:format("intact after ~b rounds~n", [R]);
        [{failed, Round, Error} | _] -> io:format("corrupt at round ~b: ~0p~n", [Round, Error])
    end,
    halt(0).

rounds(_Tab, _Worker, Round, Rounds, _Mode) when Round > Rounds ->
    ok;
rounds(Tab, Worker, Round, Rounds, Mode) ->
    Name = list_to_atom("%2F_race-" ++ integer_to_list(Worker) ++ "-" ++ integer_to_list(Round)),
    UId = integer_to_binary(erlang:unique_integer([positive])),
    Steps = [fun() -> dets:insert(Tab, {Name, UId}) end,
             fun() -> dets:lookup(Tab, Name) end,
             fun() -> dets:delete(Tab, Name) end]
        ++ [fun() -> dets:select_delete(Tab, [{{'_', UId}, [], [true]}]) end || Mode =:= select_delete],
    case first_error(Steps) of
        ok -> rounds(Tab, Worker, Round + 1, Rounds, Mode);
        Error -> {failed, Round, Error}
    end.

first_error([]) ->
    ok;
first_error([Step | Steps]) ->
    case Step() of
        {error, _} = Error -> Error;
        _ -> first_error(Steps)
    end.
